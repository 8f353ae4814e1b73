package gargantuasim

import (
	"errors"
	"fmt"
	"slices"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// reactToVM is what Gargantua does on seeing a VM change. For a deleting VM
// it releases finalizers (releaseFinalizers). A tainted VM is deleted by the
// v3.1+ terraform service whoever provisions it; before v3.1 nothing deletes
// it (Gargantua's own terraform controller skips labelled VMs).
func (g *Gargantua) reactToVM(vm *hfv1.VirtualMachine) error {
	switch {
	case vm.DeletionTimestamp != nil && !g.Version.retriesVMSetFinalizer():
		if !slices.Contains(vm.Finalizers, VMSetFinalizer) {
			// Gargantua GETs the VM first; a finalizer once gone never comes
			// back, so the cached copy answers the same and saves the request.
			return nil
		}
		return g.removeVMSetFinalizer(vm.Name)
	case vm.DeletionTimestamp != nil:
		return g.releaseFinalizers(vm)
	case vm.Status.Tainted && g.Version.runsTerraformService():
		return ignoreNotFound(g.Clients.VMs.Delete(g.Namespace, vm.Name, nil))
	}
	return nil
}

// releaseFinalizers: the v3.1+ terraform service removes
// finalizer.hobbyfarm.io/vmset from a deleting VM and, finding none, sets the
// VM's finalizers to [], the provisioner's included, so the VM is gone
// within moments of its deletion. It retries on conflict.
func (g *Gargantua) releaseFinalizers(vm *hfv1.VirtualMachine) error {
	switch {
	case slices.Contains(vm.Finalizers, VMSetFinalizer):
		vm.Finalizers = slices.DeleteFunc(vm.Finalizers, func(f string) bool { return f == VMSetFinalizer })
	case g.Version.runsTerraformService() && len(vm.Finalizers) > 0:
		vm.Finalizers = nil
	default:
		return nil
	}
	_, err := g.Clients.VMs.Update(vm)
	return ignoreNotFound(err)
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// errKeyNeverDone marks a VM whose work-queue key the VM set controller of
// v3.0.1-rc0 and earlier leaves in processing for good.
var errKeyNeverDone = errors.New("the VM set controller returned without marking the VM's key done: it never processes this VM again")

// removeVMSetFinalizer is the VM set controller of v3.0.1-rc0 and earlier on
// a deleting VM (vmsetcontroller.go, processNextVM and removeVMFinalizer): a
// GET, then an UPDATE of that copy without its finalizer, with no retry.
// When either fails (a conflict: another client wrote the VM in between),
// processNextVM returns without calling the work queue's Done, so the key
// stays "processing" for the life of the process and every later event only
// marks it dirty: the VM stays Terminating until Gargantua restarts.
// VMSetFinalizerPause widens the window between the two calls.
func (g *Gargantua) removeVMSetFinalizer(name string) error {
	vm, err := g.Clients.VMs.Get(g.Namespace, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return fmt.Errorf("%w: %w", errKeyNeverDone, err)
	}
	if !slices.Contains(vm.Finalizers, VMSetFinalizer) {
		return nil
	}
	time.Sleep(g.VMSetFinalizerPause)
	vm.Finalizers = slices.DeleteFunc(vm.Finalizers, func(f string) bool { return f == VMSetFinalizer })
	if _, err := g.Clients.VMs.Update(vm); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("%w: %w", errKeyNeverDone, err)
	}
	return nil
}
