package droplet

import (
	"context"
	"testing"

	"github.com/digitalocean/godo"
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
		d.Labels[v1alpha1.ScheduledEventLabel] = event
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
