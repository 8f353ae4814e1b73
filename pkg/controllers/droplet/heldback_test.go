package droplet

import (
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"k8s.io/client-go/tools/record"
)

// A create this controller's limiter held back was never sent: the Droplet
// stays one never sent, so its next try needs no lookup.
func TestHeldBackCreateStaysNeverSent(t *testing.T) {
	h := &handler{backoff: digitalocean.NewBackoff(), recorder: record.NewFakeRecorder(10)}
	held := &digitalocean.HeldBackError{Wait: 2 * time.Second, Priority: digitalocean.PriorityCreate}
	d := &v1alpha1.Droplet{Spec: v1alpha1.DropletSpec{Name: "vm-1"}}
	if after := h.failCreate(d, held, true); after != 2*time.Second {
		t.Errorf("retry after %v, want the limiter's 2s", after)
	}
	if !v1alpha1.NeverSent(d) || v1alpha1.MayExistInDigitalOcean(d) {
		t.Errorf("held back before anything was sent, yet may exist: %+v", d.Status.Conditions)
	}
}
