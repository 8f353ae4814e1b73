package virtualmachine

import (
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	hfcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io/v1"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/rancher/wrangler/v3/pkg/generic"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// dropletsCaching has the Droplet cached once cached is set.
type dropletsCaching struct {
	provcontrollers.DropletController
	cached bool
}

type dropletCacheOf struct {
	provcontrollers.DropletCache
	of *dropletsCaching
}

func (f *dropletsCaching) Cache() generic.CacheInterface[*v1alpha1.Droplet] {
	return dropletCacheOf{of: f}
}

func (c dropletCacheOf) Get(namespace, name string) (*v1alpha1.Droplet, error) {
	if !c.of.cached {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "droplets"}, name)
	}
	return &v1alpha1.Droplet{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}, nil
}

// enqueueRecorder records EnqueueAfter; nothing else is called.
type enqueueRecorder struct {
	hfcontrollers.VirtualMachineController
	after []time.Duration
}

func (f *enqueueRecorder) EnqueueAfter(_, _ string, after time.Duration) {
	f.after = append(f.after, after)
}

// A VM handled again before its new Droplet reached the cache leaves
// apply alone, and is looked at again in case the create failed; once the
// Droplet is cached, or applyLag has passed, apply runs.
func TestApplyWaitsForTheCacheOfWhatItCreated(t *testing.T) {
	vm := &hfv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "ns", UID: "u1"}}
	objs := []runtime.Object{&v1alpha1.Droplet{ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "ns"}}}
	droplets := &dropletsCaching{}
	vms := &enqueueRecorder{}
	h := &handler{vms: vms, droplets: droplets, secrets: noSecrets{}}

	if h.awaitingCache(vm, objs) {
		t.Fatal("first pass: apply held back; it must create the Droplet")
	}
	if !h.awaitingCache(vm, objs) {
		t.Fatal("second pass before the cache has the Droplet: apply would create it twice")
	}
	if len(vms.after) != 1 || vms.after[0] <= 0 || vms.after[0] > applyLag {
		t.Fatalf("re-queued after %v, want once within %v", vms.after, applyLag)
	}

	h.applied.Store(vm.UID, time.Now().Add(-applyLag))
	if h.awaitingCache(vm, objs) {
		t.Fatal("applyLag passed without the Droplet: the create may have failed, apply must run again")
	}

	droplets.cached = true
	if h.awaitingCache(vm, objs) {
		t.Fatal("Droplet cached: apply held back")
	}
	if _, ok := h.applied.Load(vm.UID); ok {
		t.Fatal("record kept after the Droplet reached the cache")
	}
}
