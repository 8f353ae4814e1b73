package droplet

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/digitalocean/godo"
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func pricedDroplet(id int, env, event, price string) *v1alpha1.Droplet {
	d := &v1alpha1.Droplet{ObjectMeta: metav1.ObjectMeta{
		Annotations: map[string]string{v1alpha1.EnvironmentAnnotation: env},
		Labels:      map[string]string{},
	}}
	if event != "" {
		d.Labels[ScheduledEventLabel] = event
	}
	d.Status.DropletID = id
	d.Status.PriceHourly = price
	return d
}

func TestHourlyCostSumsExistingDropletsByEnvironmentAndEvent(t *testing.T) {
	deleting := pricedDroplet(4, "env-a", "", "0.00893")
	deleting.DeletionTimestamp = &metav1.Time{}
	got := hourlyCost([]*v1alpha1.Droplet{
		pricedDroplet(1, "env-a", "", "0.00893"),
		pricedDroplet(2, "env-a", "", "0.00893"),
		pricedDroplet(3, "env-a", "event-1", "0.03571"),
		deleting,                                    // still billed until DigitalOcean deletes it
		pricedDroplet(0, "env-a", "", "0.00893"),    // never created
		pricedDroplet(5, "env-b", "event-1", ""),    // price not known yet
		pricedDroplet(6, "env-b", "event-1", "n/a"), // unparseable
	})
	want := map[metrics.CostKey]float64{
		{Environment: "env-a"}:                            3 * 0.00893,
		{Environment: "env-a", ScheduledEvent: "event-1"}: 0.03571,
	}
	if len(got) != len(want) {
		t.Fatalf("hourly cost %v, want %v", got, want)
	}
	for k, v := range want {
		if diff := got[k] - v; diff > 1e-9 || diff < -1e-9 {
			t.Errorf("hourly cost of %+v = %v, want %v", k, got[k], v)
		}
	}
}

// Unclaimed pool members count under scheduled_event "warm-pool"; a claimed
// one is left to its VM's Droplet, so it is never counted twice.
func TestHourlyCostCountsWarmPoolMembers(t *testing.T) {
	member := func(id int, claimed bool) *v1alpha1.Droplet {
		d := pricedDroplet(id, "env-a", "", "0.00893")
		d.Spec.VirtualMachine = ""
		d.Spec.Pool = &v1alpha1.PoolMembership{Name: "env-a-t", RequestHash: "h"}
		if claimed {
			d.Status.Claim = &v1alpha1.ClaimRef{VirtualMachine: "vm-1", UID: "u"}
		}
		return d
	}
	got := hourlyCost([]*v1alpha1.Droplet{member(1, false), member(2, false), member(3, true), pricedDroplet(4, "env-a", "", "0.00893")})
	if len(got) != 2 || got[metrics.CostKey{Environment: "env-a", ScheduledEvent: WarmPoolCostEvent}] != 2*0.00893 ||
		got[metrics.CostKey{Environment: "env-a"}] != 0.00893 {
		t.Errorf("hourly cost %v, want 2 unclaimed members under warm-pool and 1 VM droplet", got)
	}
}

func TestObservePriceFromTheSizeDigitalOceanReturns(t *testing.T) {
	_, client, _ := newDeleteWorld(t)
	created, _, err := client.Droplets.Create(context.Background(), &godo.DropletCreateRequest{
		Name: "cost", Region: "nyc1", Size: "s-1vcpu-1gb", Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"},
	})
	if err != nil {
		t.Fatal(err)
	}
	d := &v1alpha1.Droplet{}
	observePrice(d, created)
	if d.Status.PriceHourly != "0.00893" || d.Status.PriceMonthly != "6" {
		t.Fatalf("prices %q/%q, want 0.00893/6", d.Status.PriceHourly, d.Status.PriceMonthly)
	}
	// A droplet known only by its ID keeps what was recorded.
	observePrice(d, &godo.Droplet{ID: created.ID, Status: "new"})
	if d.Status.PriceHourly != "0.00893" {
		t.Fatalf("price lost: %q", d.Status.PriceHourly)
	}
}

func TestCostLabels(t *testing.T) {
	priced := &v1alpha1.Droplet{Status: v1alpha1.DropletStatus{DropletID: 1, PriceHourly: "0.03571"}}
	vm := func(labels map[string]string, env string) *hfv1.VirtualMachine {
		return &hfv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Status: hfv1.VirtualMachineStatus{EnvironmentId: env}}
	}
	cost := func(group string) map[string]string {
		return map[string]string{CostGroupLabel: group, CostBasePriceLabel: "0.03571", CostTimeUnitLabel: "hours"}
	}
	with := func(a, b map[string]string) map[string]string {
		out := maps.Clone(a)
		maps.Copy(out, b)
		return out
	}
	for _, tc := range []struct {
		name     string
		vm       *hfv1.VirtualMachine
		existing *v1alpha1.Droplet
		want     map[string]string
	}{
		{"price unknown: only the event", vm(map[string]string{ScheduledEventLabel: "se"}, "env"), nil,
			map[string]string{ScheduledEventLabel: "se"}},
		{"price unknown, no event", vm(nil, "env"), &v1alpha1.Droplet{}, map[string]string{}},
		{"the VM's cost group wins", vm(map[string]string{CostGroupLabel: "cg", ScheduledEventLabel: "se"}, "env"), priced,
			with(cost("cg"), map[string]string{ScheduledEventLabel: "se"})},
		{"then the scheduled event", vm(map[string]string{ScheduledEventLabel: "se"}, "env"), priced,
			with(cost("se"), map[string]string{ScheduledEventLabel: "se"})},
		{"a cost group alone names the event", vm(map[string]string{CostGroupLabel: "cg"}, "env"), priced,
			with(cost("cg"), map[string]string{ScheduledEventLabel: "cg"})},
		{"then the Environment", vm(map[string]string{ScheduledEventLabel: ""}, "env"), priced, cost("env")},
		{"an Environment name no label can hold", vm(nil, strings.Repeat("e", 64)), priced, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CostLabels(tc.vm, tc.existing); !maps.Equal(got, tc.want) {
				t.Errorf("CostLabels = %v, want %v", got, tc.want)
			}
		})
	}
}
