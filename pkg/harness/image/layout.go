package image

import (
	"archive/tar"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// WriteLayout writes idx as an OCI image layout in dir, replacing what dir
// held. index.json names the image ref the way BuildKit's OCI exporter does,
// so that containerd's import (`ctr images import`, `kind load
// image-archive`) tags it: io.containerd.image.name holds the full ref,
// org.opencontainers.image.ref.name the tag.
func WriteLayout(dir string, idx v1.ImageIndex, ref name.Tag) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	named := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), mutate.IndexAddendum{
		Add: idx,
		Descriptor: v1.Descriptor{Annotations: map[string]string{
			"io.containerd.image.name":          ref.Name(),
			"org.opencontainers.image.ref.name": ref.TagStr(),
		}},
	})
	_, err := layout.Write(dir, named)
	return err
}

// WriteArchive tars an OCI layout directory into file (an OCI archive),
// entries sorted by path, owned by 0:0, with fixed modes and mtime.
func WriteArchive(layoutDir, file string, mtime time.Time) error {
	out, err := os.Create(file)
	if err != nil {
		return err
	}
	defer out.Close()
	tw := tar.NewWriter(out)
	// WalkDir visits in lexical order, so the archive is the same on every machine.
	err = filepath.WalkDir(layoutDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == layoutDir {
			return err
		}
		rel, err := filepath.Rel(layoutDir, path)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, ModTime: mtime.Truncate(time.Second), Typeflag: tar.TypeReg}
		if d.IsDir() {
			hdr.Name, hdr.Mode, hdr.Typeflag = hdr.Name+"/", 0o755, tar.TypeDir
			return tw.WriteHeader(hdr)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr.Size = info.Size()
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return out.Close()
}
