package virtualmachine

import (
	"slices"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// applyLag bounds how long a VM's objects, just handed to apply to create,
// may take to reach the cache before apply is asked again.
const applyLag = 2 * time.Second

// awaitingCache: this handler handed apply, less than applyLag ago, objects
// of vm that the cache still lacks. Apply is creating them; applying again
// before the watch brings them sends a create that fails as a duplicate,
// then a read and a patch, which in a flood of 1,000 VMs would befall a
// fifth to a quarter of them. The objects' watch handles the VM again when they
// arrive; the re-queue covers a create that failed.
func (h *handler) awaitingCache(vm *hfv1.VirtualMachine, objs []runtime.Object) bool {
	if !h.anyUncached(objs) {
		h.applied.Delete(vm.UID)
		return false
	}
	if at, ok := h.applied.Load(vm.UID); ok {
		if left := applyLag - time.Since(at.(time.Time)); left > 0 {
			h.vms.EnqueueAfter(vm.Namespace, vm.Name, left)
			return true
		}
	}
	h.applied.Store(vm.UID, time.Now())
	return false
}

// anyUncached: the cache lacks one of objs.
func (h *handler) anyUncached(objs []runtime.Object) bool {
	return slices.ContainsFunc(objs, func(obj runtime.Object) bool {
		_, cached, known := h.cachedCopy(obj)
		return known && cached == nil
	})
}
