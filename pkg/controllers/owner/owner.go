// Package owner finds the VirtualMachine a Droplet or Key was made for.
package owner

import (
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	hfcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VM returns the cached VM named vmName if it is the very VM (by UID) that
// obj's owner references name; a VM recreated under the same name is not it.
func VM(vms hfcontrollers.VirtualMachineCache, obj metav1.Object, vmName string) *hfv1.VirtualMachine {
	vm, err := vms.Get(obj.GetNamespace(), vmName)
	if err != nil {
		return nil
	}
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID == vm.UID {
			return vm
		}
	}
	return nil
}
