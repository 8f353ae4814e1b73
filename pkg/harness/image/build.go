package image

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Build makes the image index: one image per platform, each the shared
// system layer plus that platform's binary.
func Build(ctx context.Context, o Options) (v1.ImageIndex, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if o.Binary == nil {
		o.Binary = GoBuild
	}
	sys, err := systemFiles()
	if err != nil {
		return nil, err
	}
	sysLayer, err := layer(sys, o.Created)
	if err != nil {
		return nil, err
	}
	var adds []mutate.IndexAddendum
	for _, p := range o.Platforms {
		bin, err := o.Binary(ctx, o, p)
		if err != nil {
			return nil, err
		}
		binLayer, err := layer(binaryFiles(bin), o.Created)
		if err != nil {
			return nil, err
		}
		img, err := platformImage(o, p, sysLayer, binLayer)
		if err != nil {
			return nil, err
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	return mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...), nil
}

func platformImage(o Options, p v1.Platform, sysLayer, binLayer v1.Layer) (v1.Image, error) {
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.ConfigFile(img, &v1.ConfigFile{
		Architecture: p.Architecture,
		OS:           p.OS,
		Variant:      p.Variant,
		Created:      v1.Time{Time: o.Created},
		RootFS:       v1.RootFS{Type: "layers"},
		Config: v1.Config{
			Entrypoint: []string{"/" + BinaryName},
			User:       User,
			WorkingDir: "/",
			Labels:     Labels(o),
		},
	})
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: o.Created}
	return mutate.Append(img,
		mutate.Addendum{Layer: sysLayer, History: v1.History{Created: created, CreatedBy: "pkg/harness/image: users, CA certificates, /tmp"}},
		mutate.Addendum{Layer: binLayer, History: v1.History{Created: created, CreatedBy: "pkg/harness/image: go build " + o.Version}},
	)
}

// layer is a gzip-compressed OCI layer of files. The compressed bytes are
// kept, as digesting, writing and pushing each read them.
func layer(files []file, mtime time.Time) (v1.Layer, error) {
	data, err := layerTar(files, mtime)
	if err != nil {
		return nil, err
	}
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.BestCompression), tarball.WithCompressedCaching)
}
