package droplet

import (
	"strconv"

	"github.com/digitalocean/godo"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
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
		event := d.Labels[v1alpha1.ScheduledEventLabel]
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
