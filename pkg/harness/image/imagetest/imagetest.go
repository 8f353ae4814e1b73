// Package imagetest reads the images package image builds, for tests: the
// image of one platform, its flattened files, and its filesystem unpacked.
package imagetest

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// PlatformImage is idx's image for linux/arch.
func PlatformImage(idx v1.ImageIndex, arch string) (v1.Image, error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range m.Manifests {
		if d.Platform != nil && d.Platform.OS == "linux" && d.Platform.Architecture == arch {
			return idx.Image(d.Digest)
		}
	}
	return nil, fmt.Errorf("no linux/%s image in the index", arch)
}

// File is one entry of an image's flattened filesystem.
type File struct {
	Mode     fs.FileMode
	UID, GID int
	Data     []byte
}

// Files is img's flattened filesystem by absolute path.
func Files(img v1.Image) (map[string]File, error) {
	files := map[string]File{}
	err := walk(img, func(hdr *tar.Header, r io.Reader) error {
		data, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		files[path.Clean("/"+hdr.Name)] = File{Mode: hdr.FileInfo().Mode(), UID: hdr.Uid, GID: hdr.Gid, Data: data}
		return nil
	})
	return files, err
}

// Unpack writes img's filesystem into dir, with the image's modes; the
// files belong to whoever runs it.
func Unpack(img v1.Image, dir string) error {
	return walk(img, func(hdr *tar.Header, r io.Reader) error {
		path := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		if !strings.HasPrefix(path, filepath.Clean(dir)+string(filepath.Separator)) {
			return fmt.Errorf("%q leaves the root", hdr.Name)
		}
		mode := hdr.FileInfo().Mode()
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			// Layers flatten top first, so a file may come before its directory.
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, r)
			if err := errors.Join(err, f.Close()); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: unexpected tar entry type %q", hdr.Name, hdr.Typeflag)
		}
		return os.Chmod(path, mode&(fs.ModePerm|fs.ModeSticky|fs.ModeSetuid|fs.ModeSetgid))
	})
}

// walk calls f for each entry of img's flattened filesystem, in tar order.
func walk(img v1.Image, f func(*tar.Header, io.Reader) error) error {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := f(hdr, tr); err != nil {
			return err
		}
	}
}

// LayerHeaders are the tar headers of one layer, in its order.
func LayerHeaders(l v1.Layer) ([]*tar.Header, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var hdrs []*tar.Header
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return hdrs, nil
		}
		if err != nil {
			return nil, err
		}
		hdrs = append(hdrs, hdr)
	}
}
