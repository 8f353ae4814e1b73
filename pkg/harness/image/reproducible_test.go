package image_test

import (
	"context"
	"testing"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
)

// TestSameCommitSameDigest compiles the controller for every platform twice:
// the image index digest must not change. Minutes of compiling: not under -short.
func TestSameCommitSameDigest(t *testing.T) {
	testenv.SkipUnlessFull(t)
	first, o := realIndex(t)
	again, err := image.Build(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := digest(t, first), digest(t, again); a != b {
		t.Errorf("two builds of %s: %s and %s", o.Revision, a, b)
	}
}
