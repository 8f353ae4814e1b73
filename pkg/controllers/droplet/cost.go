package droplet

import (
	"strconv"

	"github.com/digitalocean/godo"
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Labels of Gargantua's. Its cost service (v3.3 services/costsvc) counts
// every object of its tracked resources that has all three cost labels:
// cost-base-price a float, cost-time-unit seconds, minutes or hours.
const (
	CostGroupLabel      = "hobbyfarm.io/cost-group"
	CostBasePriceLabel  = "hobbyfarm.io/cost-base-price"
	CostTimeUnitLabel   = "hobbyfarm.io/cost-time-unit"
	ScheduledEventLabel = "hobbyfarm.io/scheduledevent"
	costTimeUnitHours   = "hours"
)

// observePrice records the prices of the droplet's size. DigitalOcean puts
// the size's catalog entry in every droplet it returns, so this costs no
// request; a droplet known only by its ID (see getCreated) keeps the prices.
func observePrice(d *v1alpha1.Droplet, do *godo.Droplet) {
	if do.Size == nil || do.Size.Slug == "" {
		return
	}
	d.Status.PriceHourly = formatDollars(do.Size.PriceHourly)
	d.Status.PriceMonthly = formatDollars(do.Size.PriceMonthly)
}

func formatDollars(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

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
		out[ScheduledEventLabel] = event
	}
	if existing == nil || existing.Status.PriceHourly == "" {
		return out
	}
	group := vm.Labels[CostGroupLabel]
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
	out[CostGroupLabel] = group
	out[CostBasePriceLabel] = existing.Status.PriceHourly
	out[CostTimeUnitLabel] = costTimeUnitHours
	return out
}

// scheduledEvent is the VM's scheduled event: Gargantua labels claim and VM
// set VMs with it, and from v3.3 names it in the cost group too.
func scheduledEvent(vm *hfv1.VirtualMachine) string {
	if event := vm.Labels[ScheduledEventLabel]; event != "" {
		return event
	}
	return vm.Labels[CostGroupLabel]
}

// HourlyCost feeds hf_do_hourly_cost_dollars from the Droplet cache.
func HourlyCost(cache provcontrollers.DropletCache) func() map[metrics.CostKey]float64 {
	return func() map[metrics.CostKey]float64 {
		all, err := cache.List("", everything)
		if err != nil {
			return nil
		}
		return hourlyCost(all)
	}
}

// WarmPoolCostEvent is hf_do_hourly_cost_dollars' scheduled_event for
// unclaimed warm pool members.
const WarmPoolCostEvent = "warm-pool"

// hourlyCost sums the hourly prices of the droplets that exist in
// DigitalOcean (deleting ones too: they bill until DigitalOcean deletes
// them, and then their Droplet goes) by Environment and scheduled event.
func hourlyCost(droplets []*v1alpha1.Droplet) map[metrics.CostKey]float64 {
	out := map[metrics.CostKey]float64{}
	for _, d := range droplets {
		price, err := strconv.ParseFloat(d.Status.PriceHourly, 64)
		if d.Status.DropletID == 0 || err != nil {
			continue
		}
		event := d.Labels[ScheduledEventLabel]
		if d.Spec.Pool != nil && d.Spec.VirtualMachine == "" {
			if d.Status.Claim != nil {
				// The claiming VM's Droplet counts it once it records the ID.
				continue
			}
			event = WarmPoolCostEvent
		}
		key := metrics.CostKey{Environment: d.Annotations[v1alpha1.EnvironmentAnnotation], ScheduledEvent: event}
		out[key] += price
	}
	return out
}
