package droplet

import (
	"encoding/json"
	"strconv"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
)

func knownDropletID(vm *hfv1.VirtualMachine) int {
	if vm == nil {
		return 0
	}
	id, _ := strconv.Atoi(vm.Annotations[v1alpha1.KnownDropletAnnotation])
	return id
}

// rememberDroplet puts the droplet's ID on its live VM, with a merge patch
// of that one annotation (the VM is Gargantua's object).
func (h *handler) rememberDroplet(vm *hfv1.VirtualMachine, id int) error {
	if id == 0 || knownDropletID(vm) == id {
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations": map[string]string{v1alpha1.KnownDropletAnnotation: strconv.Itoa(id)}}})
	_, err := h.vmClient.Patch(vm.Namespace, vm.Name, types.MergePatchType, patch)
	return err
}
