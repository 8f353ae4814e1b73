package image_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image"
)

// TestLayoutNamesTheImageForContainerdImport: containerd's import (k3s ctr
// images import, kind load image-archive) tags what index.json names.
func TestLayoutNamesTheImageForContainerdImport(t *testing.T) {
	idx := quickIndex(t)
	dir := filepath.Join(t.TempDir(), "oci")
	ref := name.MustParseReference(image.Repository + ":1.2.3").(name.Tag)
	if err := image.WriteLayout(dir, idx, ref); err != nil {
		t.Fatal(err)
	}
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 {
		t.Fatalf("index.json lists %d entries, want the image index alone", len(m.Manifests))
	}
	d := m.Manifests[0]
	if d.Digest != digest(t, idx) {
		t.Errorf("index.json points at %s, want the image index %s", d.Digest, digest(t, idx))
	}
	if got := d.Annotations["io.containerd.image.name"]; got != "ghcr.io/hobbyfarm/hf-provisioner-digitalocean:1.2.3" {
		t.Errorf("io.containerd.image.name %q", got)
	}
	if got := d.Annotations["org.opencontainers.image.ref.name"]; got != "1.2.3" {
		t.Errorf("org.opencontainers.image.ref.name %q", got)
	}
	inner, err := top.ImageIndex(d.Digest)
	if err != nil {
		t.Fatal(err)
	}
	// Reads every blob back and checks digests, sizes and platforms.
	if err := validate.Index(inner); err != nil {
		t.Errorf("the layout's image index: %v", err)
	}
}

func TestArchiveIsTheSameBytesEachTime(t *testing.T) {
	idx := quickIndex(t)
	ref := name.MustParseReference(image.Repository + ":1.2.3").(name.Tag)
	var archives [][]byte
	for i := range 2 {
		dir := t.TempDir()
		layoutDir := filepath.Join(dir, "oci")
		if err := image.WriteLayout(layoutDir, idx, ref); err != nil {
			t.Fatal(err)
		}
		// A different umask or clock on the machine must not show in the archive.
		if err := os.Chmod(filepath.Join(layoutDir, "index.json"), 0o600+os.FileMode(i)); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "image.oci.tar")
		if err := image.WriteArchive(layoutDir, file, created); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		archives = append(archives, data)
	}
	if !bytes.Equal(archives[0], archives[1]) {
		t.Fatal("two archives of the same image differ")
	}
	var names []string
	tr := tar.NewReader(bytes.NewReader(archives[0]))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, hdr.Name)
	}
	for _, want := range []string{"oci-layout", "index.json", "blobs/sha256/" + digest(t, idx).Hex} {
		if !slices.Contains(names, want) {
			t.Errorf("archive lacks %s: %v", want, names)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("archive entries not sorted: %v", names)
	}
}
