package virtualmachine

import (
	"strings"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/finalizer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
)

func deletingVM(deleted time.Time, finalizers ...string) *hfv1.VirtualMachine {
	at := metav1.NewTime(deleted)
	return &hfv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "ns", UID: "u1",
		ResourceVersion: "7", DeletionTimestamp: &at, Finalizers: finalizers}}
}

func TestReleaseWaitsForGargantuasFinalizerWithinTheBound(t *testing.T) {
	deleted := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	ours := finalizer.Of(finalizer.VMCleanupHandler)
	for _, c := range []struct {
		name  string
		vm    *hfv1.VirtualMachine
		now   time.Time
		waits bool
	}{
		{"ours alone", deletingVM(deleted, ours), deleted.Add(time.Second), false},
		{"Gargantua's still there", deletingVM(deleted, GargantuaVMSetFinalizer, ours), deleted.Add(time.Second), true},
		{"just before the bound", deletingVM(deleted, ours, GargantuaVMSetFinalizer), deleted.Add(GargantuaFinalizerWait - time.Second), true},
		{"past the bound", deletingVM(deleted, GargantuaVMSetFinalizer, ours), deleted.Add(GargantuaFinalizerWait), false},
		{"another controller's finalizer", deletingVM(deleted, "example.com/other", ours), deleted.Add(time.Second), false},
	} {
		wait := waitForGargantua(c.vm, c.now)
		if (wait > 0) != c.waits {
			t.Errorf("%s: wait %v, want waiting %v", c.name, wait, c.waits)
		}
		if wait > gargantuaFinalizerPoll {
			t.Errorf("%s: wait %v, more than the poll %v", c.name, wait, gargantuaFinalizerPoll)
		}
	}
	// Never past the bound: the last wait ends at it.
	if wait := waitForGargantua(deletingVM(deleted, GargantuaVMSetFinalizer), deleted.Add(GargantuaFinalizerWait-time.Second)); wait != time.Second {
		t.Errorf("a second before the bound: wait %v, want 1s", wait)
	}
}

// Once the bound has passed, our finalizer goes with Gargantua's still on the
// VM, and a Warning says what the operator does.
func TestReleaseBesideGargantuasFinalizerSaysSo(t *testing.T) {
	vm := deletingVM(time.Now().Add(-GargantuaFinalizerWait), GargantuaVMSetFinalizer, finalizer.Of(finalizer.VMCleanupHandler))
	recorder := record.NewFakeRecorder(10)
	vms := &patchOnlyVMs{}
	h := &handler{vms: vms, secrets: noSecrets{}, recorder: recorder}
	if err := h.release(vm, nil); err != nil {
		t.Fatal(err)
	}
	if vms.patches != 1 {
		t.Errorf("%d finalizer patches, want 1", vms.patches)
	}
	select {
	case e := <-recorder.Events:
		if !strings.HasPrefix(e, "Warning GargantuaFinalizerRemains") || !strings.Contains(e, GargantuaVMSetFinalizer) ||
			!strings.Contains(e, "restart Gargantua") {
			t.Errorf("Event %q: want a Warning naming Gargantua's finalizer and the fix", e)
		}
	default:
		t.Error("no Event")
	}
}
