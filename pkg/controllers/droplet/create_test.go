package droplet

import (
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"k8s.io/client-go/tools/record"
)

func keyIn(state, message string) *v1alpha1.Key {
	return &v1alpha1.Key{Status: v1alpha1.KeyStatus{State: state, Message: message}}
}

func TestWaitingForKeyNamesOnlyAProblem(t *testing.T) {
	for _, k := range []*v1alpha1.Key{nil, {}, keyIn("Creating", "registering the SSH key in DigitalOcean")} {
		if got := waitingForKey("vm", k); got != `waiting for Key "vm" to be created in DigitalOcean` {
			t.Errorf("waitingForKey(%+v) = %q", k, got)
		}
	}
}

// A create this controller's limiter held back was never sent: the Droplet
// stays one never sent, so its next try needs no lookup.
func TestHeldBackCreateStaysNeverSent(t *testing.T) {
	recorder := record.NewFakeRecorder(10)
	h := (&handler{recorder: recorder}).withPass(recorder)
	held := &digitalocean.HeldBackError{Wait: 2 * time.Second, Priority: digitalocean.PriorityCreate}
	d := &v1alpha1.Droplet{Spec: v1alpha1.DropletSpec{Name: "vm-1"}}
	if after := h.failCreate(nil, d, held, true, d.Spec.Region); after != 2*time.Second {
		t.Errorf("retry after %v, want the limiter's 2s", after)
	}
	if !v1alpha1.NeverSent(d) || v1alpha1.MayExistInDigitalOcean(d) {
		t.Errorf("held back before anything was sent, yet may exist: %+v", d.Status.Conditions)
	}
}
