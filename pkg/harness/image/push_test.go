package image_test

import (
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image"
)

// TestPushUploadsTheIndex pushes to an in-memory registry on loopback, as
// the release workflow pushes to ghcr.io.
func TestPushUploadsTheIndex(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	ref, err := name.ParseReference(strings.TrimPrefix(srv.URL, "http://") + "/hobbyfarm/hf-provisioner-digitalocean:1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	idx := quickIndex(t)
	if err := image.Push(t.Context(), idx, ref); err != nil {
		t.Fatal(err)
	}
	pushed, err := remote.Index(ref, remote.WithContext(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := digest(t, pushed), digest(t, idx); got != want {
		t.Errorf("registry serves %s, want %s", got, want)
	}
}
