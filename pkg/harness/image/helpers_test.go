package image_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image"
)

// created is the fixed time of the images built with a stand-in binary.
var created = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

// quickOptions build with a stand-in binary: the image's assembly in
// milliseconds, with no compiler.
func quickOptions() image.Options {
	return image.Options{
		Version:   "1.2.3",
		Revision:  "0123456789abcdef0123456789abcdef01234567",
		Created:   created,
		Platforms: image.DefaultPlatforms,
		Binary: func(_ context.Context, o image.Options, p v1.Platform) ([]byte, error) {
			return []byte("binary " + o.Version + " " + p.Architecture), nil
		},
	}
}

func quickIndex(t *testing.T) v1.ImageIndex {
	t.Helper()
	idx, err := image.Build(t.Context(), quickOptions())
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

var (
	realOnce  sync.Once
	realIdx   v1.ImageIndex
	realOpts  image.Options
	realError error
)

// realIndex is the checkout's image for both platforms, as scripts/image
// builds it, compiled once for the tests that need the real binary.
func realIndex(t *testing.T) (v1.ImageIndex, image.Options) {
	t.Helper()
	realOnce.Do(func() {
		realOpts, realError = image.Defaults(context.Background(), moduleRoot(t))
		if realError == nil {
			realIdx, realError = image.Build(context.Background(), realOpts)
		}
	})
	if realError != nil {
		t.Fatal(realError)
	}
	return realIdx, realOpts
}

func digest(t *testing.T, d interface{ Digest() (v1.Hash, error) }) v1.Hash {
	t.Helper()
	h, err := d.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return h
}
