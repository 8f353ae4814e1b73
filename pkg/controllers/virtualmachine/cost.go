package virtualmachine

import (
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// costTimeUnitHours: DigitalOcean prices droplets by the hour.
const costTimeUnitHours = "hours"

// CostLabels are the labels the VM's Droplet carries for costs: the VM's
// scheduled event, and Gargantua's cost labels once the droplet's price is
// known (all three at once: the cost service logs an error for each update
// of an object with some but not all). The cost group is the VM's own (set
// by Gargantua v3.3 to the scheduled event's name), else its scheduled
// event, else its Environment.
func CostLabels(vm *hfv1.VirtualMachine, existing *v1alpha1.Droplet) map[string]string {
	out := map[string]string{}
	event := scheduledEvent(vm)
	if event != "" {
		out[v1alpha1.ScheduledEventLabel] = event
	}
	if existing == nil || existing.Status.PriceHourly == "" {
		return out
	}
	group := vm.Labels[v1alpha1.CostGroupLabel]
	if group == "" {
		group = event
	}
	if group == "" {
		group = vm.Status.EnvironmentId
	}
	if len(validation.IsValidLabelValue(group)) > 0 {
		// An Environment name too long for a label: no cost group rather
		// than a Droplet the API server refuses.
		return out
	}
	out[v1alpha1.CostGroupLabel] = group
	out[v1alpha1.CostBasePriceLabel] = existing.Status.PriceHourly
	out[v1alpha1.CostTimeUnitLabel] = costTimeUnitHours
	return out
}

// scheduledEvent is the VM's scheduled event: Gargantua labels claim and VM
// set VMs with it, and from v3.3 names it in the cost group too.
func scheduledEvent(vm *hfv1.VirtualMachine) string {
	if event := vm.Labels[v1alpha1.ScheduledEventLabel]; event != "" {
		return event
	}
	return vm.Labels[v1alpha1.CostGroupLabel]
}
