package virtualmachine

import (
	"encoding/json"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TaintedHandlerName names the handler that deletes tainted VMs. It adds
// no finalizer, but is part of the API all the same. Never rename it.
const TaintedHandlerName = "hf-provisioner-digitalocean-vm-tainted"

// deleteTainted deletes a VM of ours that Gargantua tainted at the end of
// its user's session. Gargantua v3.0.1-rc0 never deletes a tainted VM of a
// third-party provisioner, so a scheduled event's VM would bill until the
// event ends while its VirtualMachineSet makes a replacement; v3.1 and
// later delete it themselves, and the garbage collector deletes claim VMs:
// deleting twice is harmless. As Gargantua does with its own VMs, the VM is
// first labelled ready=false, so that nothing hands it out meanwhile. The
// delete is conditional on the very copy that was checked, so a VM that
// changed since (rebound, untainted, replaced) is looked at again.
func (h *handler) deleteTainted(_ string, vm *hfv1.VirtualMachine) (*hfv1.VirtualMachine, error) {
	if vm == nil || vm.DeletionTimestamp != nil || !Eligible(vm) || !vm.Status.Tainted {
		return vm, nil
	}
	log := logrus.WithField("vm", vm.Name)
	current := vm
	if vm.Labels[readyLabel] != "false" {
		body, err := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{
			"labels": map[string]string{readyLabel: "false"}, "resourceVersion": vm.ResourceVersion}})
		if err != nil {
			return vm, err
		}
		if current, err = h.vms.Patch(vm.Namespace, vm.Name, types.MergePatchType, body); err != nil {
			return vm, ignoreGone(err)
		}
		h.notePatchedFrom(vm.UID, vm.ResourceVersion)
	}
	uid, rv := current.UID, current.ResourceVersion
	err := h.vms.Delete(vm.Namespace, vm.Name, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
	if err != nil {
		return current, ignoreGone(err)
	}
	log.Info("VM tainted at the end of its session; deleted it, so its droplet goes")
	h.recorder.Event(current, corev1.EventTypeNormal, "TaintedDeleted", "the VM was tainted when its session ended: deleting it and its droplet")
	return current, nil
}

// ignoreGone: a VM deleted meanwhile (by Gargantua or the garbage
// collector) needs nothing more; a conflict is retried by the handler.
func ignoreGone(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
