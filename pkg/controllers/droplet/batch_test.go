package droplet

import (
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSharesKeyTellsSharedFromPerVMKeys(t *testing.T) {
	perVM := &v1alpha1.Droplet{ObjectMeta: metav1.ObjectMeta{Name: "vm-1"}}
	perVM.Spec.KeyRefs = []string{"vm-1"}
	shared := perVM.DeepCopy()
	shared.Spec.KeyRefs = []string{"hfdo-env-key"}
	if sharesKey(perVM) || !sharesKey(shared) {
		t.Errorf("sharesKey(per-VM) = %v, sharesKey(shared) = %v; want false, true", sharesKey(perVM), sharesKey(shared))
	}
}

func TestGatheringWaitsOnceFromFirstReady(t *testing.T) {
	h := &handler{}
	d := &v1alpha1.Droplet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm-1"}}
	if wait := h.gathering(d); wait <= 0 || wait > batchGather {
		t.Fatalf("first look waits %v, want (0, %v]", wait, batchGather)
	}
	// Counted from the first look, not restarted by later ones.
	h.readySince.Store(objectKey(d), time.Now().Add(-batchGather))
	if wait := h.gathering(d); wait > 0 {
		t.Errorf("after %v ready it still waits %v", batchGather, wait)
	}
}
