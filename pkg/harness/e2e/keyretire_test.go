package e2e

import (
	"fmt"
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A VM's own SSH key is deleted in DigitalOcean once its droplet exists (the
// droplet keeps accepting it, and the user logs in with the VM's Secret), so
// deleting the VM costs no key delete. (Registering it again for a droplet
// made anew: TestRetiredKeyIsRegisteredAgainForANewCreate.)
func TestAVMsKeyIsRetiredOnceItsDropletExists(t *testing.T) {
	w := newWorld(t, worldOptions{})
	env := w.standardEnv("do-env")
	w.createVM("kr", env, "ubuntu")
	w.waitRunning("kr")
	w.waitKeyRetired("kr")
	w.loginWithSecret("kr")

	if n := w.keyCreates(); n != 1 {
		t.Errorf("DigitalOcean registered %d keys, want 1", n)
	}

	// Deleting the VM costs no key delete: its key is gone already.
	deletesBefore := w.do.RequestCounts()[fakedo.RouteDeleteKey+" 204"]
	if err := w.hf.VMs.Delete(w.ns, "kr", nil); err != nil {
		t.Fatal(err)
	}
	w.eventually(60*time.Second, "the VM gone", func() string {
		if _, err := w.hf.VMs.Get(w.ns, "kr", metav1.GetOptions{}); err == nil {
			return "VM still there"
		}
		if d, k := len(w.do.Droplets(testToken)), len(w.do.Keys(testToken)); d+k > 0 {
			return fmt.Sprintf("%d droplets, %d keys left", d, k)
		}
		return ""
	})
	counts := w.do.RequestCounts()
	if n := counts[fakedo.RouteDeleteKey+" 204"] - deletesBefore; n != 0 || counts[fakedo.RouteDeleteKey+" 404"] != 0 {
		t.Errorf("key deletes after the VM's deletion: %d answered 204, %d answered 404; want none", n, counts[fakedo.RouteDeleteKey+" 404"])
	}
}

// waitKeyRetired waits until DigitalOcean holds no key and the VM's Key says why.
func (w *world) waitKeyRetired(vm string) {
	w.t.Helper()
	w.eventually(60*time.Second, vm+"'s key retired", func() string {
		if n := len(w.do.Keys(testToken)); n != 0 {
			return fmt.Sprintf("DigitalOcean holds %d keys", n)
		}
		k, err := w.keys.Get(w.ns, vm, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if k.Status.State != v1alpha1.KeyStateRetired || k.Status.KeyID != 0 {
			return fmt.Sprintf("Key state %q, key ID %d", k.Status.State, k.Status.KeyID)
		}
		return ""
	})
}
