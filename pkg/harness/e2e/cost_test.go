package e2e

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	"k8s.io/apimachinery/pkg/types"
)

// Droplets of two sizes, in two Environments, one of them a scheduled
// event's VM set: each Droplet records its size's prices, carries cost
// labels Gargantua's cost service accepts, and the hourly cost metric is
// droplets × price per Environment and scheduled event.
func TestCostOfTwoSizes(t *testing.T) {
	w := newWorld(t, worldOptions{})
	g := w.gargantua(gargantuasim.V3_3)
	small := w.standardEnv("cost-small") // template ubuntu: s-1vcpu-1gb
	if _, err := w.hf.Templates.Create(gargantuasim.Template(w.ns, "big", "ubuntu-22-04-x64", nil)); err != nil {
		t.Fatal(err)
	}
	w.createEnv(gargantuasim.Environment(w.ns, "cost-big",
		map[string]string{"region": "nyc1", "token-secret": tokenSecret},
		map[string]map[string]string{"big": {"size": "s-2vcpu-4gb"}}))

	for _, n := range []string{"small-1", "small-2", "small-3"} {
		w.createVM(n, small, "ubuntu")
	}
	// As Gargantua v3.3 labels a claim's VM when its template has a cost.
	w.labelVM("small-3", v1alpha1.CostGroupLabel, "event-2")
	if _, err := g.CreateVMSet("workshop", "cost-big", "big", 2, "event-1"); err != nil {
		t.Fatal(err)
	}
	var bigVMs []string
	w.eventually(30*time.Second, "the event's 2 VMs made", func() string {
		bigVMs = nil
		for _, vm := range w.setVMs(g, "workshop") {
			bigVMs = append(bigVMs, vm.Name)
		}
		if len(bigVMs) != 2 {
			return fmt.Sprintf("%d VMs", len(bigVMs))
		}
		return ""
	})
	w.waitRunning(append([]string{"small-1", "small-2", "small-3"}, bigVMs...)...)

	wantGroup := map[string]string{"small-1": "cost-small", "small-2": "cost-small", "small-3": "event-2"}
	for _, vm := range bigVMs {
		wantGroup[vm] = "event-1"
	}
	w.eventually(30*time.Second, "prices and cost labels on every Droplet", func() string {
		for vm, group := range wantGroup {
			if msg := w.checkCost(vm, group); msg != "" {
				return vm + ": " + msg
			}
		}
		return ""
	})

	smallPrice, bigPrice := w.hourlyPrice("small-1"), w.hourlyPrice(bigVMs[0])
	if smallPrice == bigPrice {
		t.Fatalf("both sizes cost %v an hour; the test needs two prices", smallPrice)
	}
	w.eventually(10*time.Second, "hourly cost by Environment and scheduled event", func() string {
		return costIs(map[metrics.CostKey]float64{
			{Environment: "cost-small"}:                            2 * smallPrice,
			{Environment: "cost-small", ScheduledEvent: "event-2"}: smallPrice,
			{Environment: "cost-big", ScheduledEvent: "event-1"}:   2 * bigPrice,
		})
	})

	if err := w.hf.VMs.Delete(w.ns, "small-1", nil); err != nil {
		t.Fatal(err)
	}
	w.eventually(30*time.Second, "the deleted VM's droplet no longer counted", func() string {
		return costIs(map[metrics.CostKey]float64{
			{Environment: "cost-small"}:                            smallPrice,
			{Environment: "cost-small", ScheduledEvent: "event-2"}: smallPrice,
			{Environment: "cost-big", ScheduledEvent: "event-1"}:   2 * bigPrice,
		})
	})
}

// checkCost is "" when vm's Droplet has the prices of its droplet's size
// in the fake and cost labels that parse as Gargantua's cost service
// parses them (v3.3 services/costsvc newCostGroup).
func (w *world) checkCost(vm, group string) string {
	d := w.droplet(vm)
	size, ok := w.dropletSize(d)
	if !ok {
		return "no droplet in the fake"
	}
	if size.Slug != d.Spec.Size {
		return fmt.Sprintf("the fake's droplet is %s, the Droplet asked for %s", size.Slug, d.Spec.Size)
	}
	hourly, _ := strconv.ParseFloat(d.Status.PriceHourly, 64)
	monthly, _ := strconv.ParseFloat(d.Status.PriceMonthly, 64)
	if hourly != size.PriceHourly || monthly != size.PriceMonthly {
		return fmt.Sprintf("prices %q/%q, want %v/%v (%s)", d.Status.PriceHourly, d.Status.PriceMonthly, size.PriceHourly, size.PriceMonthly, size.Slug)
	}
	row, missing := w.printed("droplets", vm)
	if missing != "" {
		return missing
	}
	if row.cells["Price/h"] != d.Status.PriceHourly || row.cells["Price/mo"] != d.Status.PriceMonthly || !row.wide["Price/h"] || !row.wide["Price/mo"] {
		return "kubectl get -o wide does not show the prices: " + row.String()
	}
	if got := d.Labels[v1alpha1.CostGroupLabel]; got != group {
		return fmt.Sprintf("cost group %q, want %q (labels %v)", got, group, d.Labels)
	}
	base, err := strconv.ParseFloat(d.Labels[v1alpha1.CostBasePriceLabel], 64)
	if err != nil || base != size.PriceHourly {
		return fmt.Sprintf("cost base price %q, want %v", d.Labels[v1alpha1.CostBasePriceLabel], size.PriceHourly)
	}
	if unit := strings.ToLower(d.Labels[v1alpha1.CostTimeUnitLabel]); unit != "hours" && unit != "hour" && unit != "h" {
		return fmt.Sprintf("cost time unit %q, want hours", unit)
	}
	return ""
}

// dropletSize is the size the fake made d's droplet with.
func (w *world) dropletSize(d *v1alpha1.Droplet) (godo.Size, bool) {
	for _, do := range w.do.Droplets(testToken) {
		if do.ID == d.Status.DropletID && do.Size != nil {
			return *do.Size, true
		}
	}
	return godo.Size{}, false
}

func (w *world) hourlyPrice(vm string) float64 {
	w.t.Helper()
	size, ok := w.dropletSize(w.droplet(vm))
	if !ok {
		w.t.Fatalf("no droplet of %s in the fake", vm)
	}
	return size.PriceHourly
}

func (w *world) labelVM(name, key, value string) {
	w.t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, key, value)
	if _, err := w.hf.VMs.Patch(w.ns, name, types.MergePatchType, []byte(patch)); err != nil {
		w.t.Fatal(err)
	}
}

// costIs is "" when hf_do_hourly_cost_dollars has exactly want's series
// and values.
func costIs(want map[metrics.CostKey]float64) string {
	families, err := metrics.Registry.Gather()
	if err != nil {
		return err.Error()
	}
	got := map[metrics.CostKey]float64{}
	for _, f := range families {
		if f.GetName() != "hf_do_hourly_cost_dollars" {
			continue
		}
		for _, m := range f.GetMetric() {
			var key metrics.CostKey
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "environment":
					key.Environment = l.GetValue()
				case "scheduled_event":
					key.ScheduledEvent = l.GetValue()
				}
			}
			got[key] = m.GetGauge().GetValue()
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("series %v, want %v", got, want)
	}
	for key, v := range want {
		if math.Abs(got[key]-v) > 1e-9 {
			return fmt.Sprintf("%+v is %v, want %v (all: %v)", key, got[key], v, got)
		}
	}
	return ""
}
