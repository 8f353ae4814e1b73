package image_test

import (
	"bytes"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image/imagetest"
)

// TestTreeIsTheImagesFilesystem: the directory the Dockerfile copies into
// its scratch image holds what the image's layers hold, with their modes.
func TestTreeIsTheImagesFilesystem(t *testing.T) {
	// A umask must not change the modes.
	defer syscall.Umask(syscall.Umask(0o077))
	dir := t.TempDir()
	if err := image.WriteTree(t.Context(), quickOptions(), v1.Platform{OS: "linux", Architecture: "arm64"}, dir); err != nil {
		t.Fatal(err)
	}
	img, err := imagetest.PlatformImage(quickIndex(t), "arm64")
	if err != nil {
		t.Fatal(err)
	}
	want, err := imagetest.Files(img)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]fs.FileMode{}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel := "/" + filepath.ToSlash(path[len(dir)+1:])
		got[rel] = info.Mode()
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if !bytes.Equal(data, want[rel].Data) {
				t.Errorf("%s: contents differ from the image's", rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) {
		t.Fatalf("tree holds %v, the image %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	for path, mode := range got {
		if mode != want[path].Mode {
			t.Errorf("%s: mode %v in the tree, %v in the image", path, mode, want[path].Mode)
		}
	}
}
