package gargantuasim

import (
	"slices"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// reactToVM is what Gargantua does on seeing a VM change. For a deleting VM
// it releases finalizers (releaseFinalizers). A tainted VM is deleted by the
// v3.1+ terraform service whoever provisions it; before v3.1 nothing deletes
// it (Gargantua's own terraform controller skips labelled VMs).
func (g *Gargantua) reactToVM(vm *hfv1.VirtualMachine) error {
	switch {
	case vm.DeletionTimestamp != nil:
		return g.releaseFinalizers(vm)
	case vm.Status.Tainted && g.Version.runsTerraformService():
		return ignoreNotFound(g.Clients.VMs.Delete(g.Namespace, vm.Name, nil))
	}
	return nil
}

// releaseFinalizers: the VM set controller (from v3.1 the terraform service)
// removes finalizer.hobbyfarm.io/vmset from a deleting VM; the v3.1+
// terraform service, finding none, sets the VM's finalizers to [], the
// provisioner's included, so the VM is gone within moments of its deletion.
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
