package droplet

import (
	"testing"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
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
