package virtualmachine

import (
	"errors"
	"testing"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/finalizer"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// fakeChild is a child whose cache and API each have it or not, and counts
// the API reads.
type fakeChild struct {
	inCache, inAPI bool
	gets           int
}

func (f *fakeChild) child() child {
	read := func(there bool) (metav1.Object, string, error) {
		if !there {
			return nil, "", apierrors.NewNotFound(schema.GroupResource{Resource: "keys"}, "vm")
		}
		return &metav1.ObjectMeta{Name: "vm"}, "it", nil
	}
	return child{
		cached: func() (metav1.Object, string, error) { return read(f.inCache) },
		get:    func() (metav1.Object, string, error) { f.gets++; return read(f.inAPI) },
	}
}

func TestRemainingAsksTheAPIOnlyWhenTheCacheShowsNothing(t *testing.T) {
	// A deleting VM's Droplet is cached; its per-VM Key never existed (a
	// shared key). Waiting needs no API read.
	droplet, key := &fakeChild{inCache: true, inAPI: true}, &fakeChild{}
	left, err := remaining([]child{droplet.child(), key.child()})
	if err != nil || len(left) != 1 {
		t.Fatalf("remaining = %d children, %v; want the Droplet", len(left), err)
	}
	if droplet.gets+key.gets != 0 {
		t.Errorf("the API was read %d times while the cache held a child; want 0", droplet.gets+key.gets)
	}

	// Both gone from the cache, but the API still has the Droplet (the
	// cache lags): it must be found, or the finalizer would go too early.
	droplet, key = &fakeChild{inAPI: true}, &fakeChild{}
	left, err = remaining([]child{droplet.child(), key.child()})
	if err != nil || len(left) != 1 {
		t.Fatalf("remaining = %d children, %v; want the Droplet the API still has", len(left), err)
	}
	if droplet.gets != 1 || key.gets != 1 {
		t.Errorf("API reads: Droplet %d, Key %d; want each confirmed once", droplet.gets, key.gets)
	}

	// Gone everywhere: nothing remains.
	droplet, key = &fakeChild{}, &fakeChild{}
	if left, err = remaining([]child{droplet.child(), key.child()}); err != nil || len(left) != 0 {
		t.Errorf("remaining = %d children, %v; want none", len(left), err)
	}
}

func TestRemainingPassesOnAReadError(t *testing.T) {
	broken := child{
		cached: func() (metav1.Object, string, error) {
			return nil, "", apierrors.NewNotFound(schema.GroupResource{Resource: "droplets"}, "vm")
		},
		get: func() (metav1.Object, string, error) { return nil, "", errors.New("connection refused") },
	}
	if _, err := remaining([]child{broken}); err == nil {
		t.Error("an API error must keep the finalizer (return the error), not count as gone")
	}
}

// A deleting Key that records its key's ID deletes that key on its own,
// after the droplets: the VM waits for its Droplet, not for that Key. A Key
// without the ID (it may need the VM's key-pair Secret), one not yet
// deleted, or one without its finalizer is waited for.
func TestAKeyThatDeletesItsOwnKeyIsNotWaitedFor(t *testing.T) {
	now := metav1.Now()
	handedOff := &v1alpha1.Key{ObjectMeta: metav1.ObjectMeta{Name: "vm", DeletionTimestamp: &now,
		Finalizers: []string{finalizer.Of(finalizer.KeyCleanupHandler)}}, Status: v1alpha1.KeyStatus{KeyID: 7}}
	keyChild := func(k *v1alpha1.Key) child {
		read := func() (metav1.Object, string, error) { return k, "its SSH key", nil }
		return child{cached: read, get: read, handedOff: keyHandedOff}
	}
	droplet := &fakeChild{inAPI: true}
	left, err := remaining([]child{droplet.child(), keyChild(handedOff)})
	if err != nil || len(left) != 1 || left[0].obj == metav1.Object(handedOff) {
		t.Fatalf("remaining = %d children, %v; want the Droplet the API still has, not the Key", len(left), err)
	}
	if left, err = remaining([]child{(&fakeChild{}).child(), keyChild(handedOff)}); err != nil || len(left) != 0 {
		t.Errorf("Droplet gone: remaining = %d children, %v; want none", len(left), err)
	}

	noID := handedOff.DeepCopy()
	noID.Status.KeyID = 0
	notDeleted := handedOff.DeepCopy()
	notDeleted.DeletionTimestamp = nil
	noFinalizer := handedOff.DeepCopy()
	noFinalizer.Finalizers = nil
	for name, k := range map[string]*v1alpha1.Key{"without the key's ID": noID, "not deleted": notDeleted, "without its finalizer": noFinalizer} {
		if left, err := remaining([]child{(&fakeChild{}).child(), keyChild(k)}); err != nil || len(left) != 1 {
			t.Errorf("a Key %s: remaining = %d children, %v; want the Key", name, len(left), err)
		}
	}
}
