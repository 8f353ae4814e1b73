package app

import (
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/virtualmachine"
	hfcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io/v1"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	"k8s.io/apimachinery/pkg/labels"
)

// pendingFrom reads what waits from the caches, for the stuck-VM and
// stuck-delete alerts; now is time.Now outside tests.
func pendingFrom(vms hfcontrollers.VirtualMachineCache, droplets provcontrollers.DropletCache, now func() time.Time) func() metrics.Pending {
	ours := labels.SelectorFromSet(labels.Set{virtualmachine.ProvisionerLabel: virtualmachine.ProvisionerName})
	return func() metrics.Pending {
		var p metrics.Pending
		t := now()
		if all, err := vms.List("", ours); err == nil {
			for _, vm := range all {
				if stillProvisioning(vm) {
					p.OldestProvisioning = max(p.OldestProvisioning, t.Sub(vm.CreationTimestamp.Time))
				}
			}
		}
		if all, err := droplets.List("", labels.Everything()); err == nil {
			for _, d := range all {
				if d.DeletionTimestamp != nil {
					p.Deleting++
					p.OldestDeleting = max(p.OldestDeleting, t.Sub(d.DeletionTimestamp.Time))
				}
			}
		}
		return p
	}
}

// stillProvisioning is a VM on its way to running: not there yet, not failed
// (errorduringprovisioning already tells the user and has its own Event), and
// not tainted or deleting (nobody waits for it any more).
func stillProvisioning(vm *hfv1.VirtualMachine) bool {
	switch vm.Status.Status {
	case hfv1.VmStatusRunning, hfv1.VmStatusTerminating, virtualmachine.VMStatusErrorDuringProvisioning:
		return false
	}
	return vm.DeletionTimestamp == nil && !vm.Status.Tainted
}
