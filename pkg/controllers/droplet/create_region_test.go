package droplet

import (
	"strings"
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
)

func TestCreatesGoToTheFirstListedRegionNotSoldOut(t *testing.T) {
	h := &handler{soldOut: newSoldOutRegions(time.Hour)}
	d := &v1alpha1.Droplet{}
	d.Spec.Region, d.Spec.Size = "nyc3,sfo3,ams3", "s-1vcpu-1gb"
	d.Spec.VPCUUID = "nyc3=a,sfo3=b,ams3=c"

	if p := h.place(d); p.region != "nyc3" || p.note() != "" || p.vpc(d) != "a" {
		t.Fatalf("nothing sold out: %+v, VPC %q; want nyc3, VPC a, nothing passed over", p, p.vpc(d))
	}
	h.soldOut.mark("nyc3", "s-1vcpu-1gb", "Size is not available in this region.")
	h.soldOut.mark("sfo3", "s-2vcpu-2gb", "Size is not available in this region.") // another size
	p := h.place(d)
	if p.region != "sfo3" || p.vpc(d) != "b" || !strings.Contains(p.note(), "instead of nyc3 (sold out of s-1vcpu-1gb") {
		t.Errorf("nyc3 sold out: %+v, VPC %q; want sfo3, VPC b, nyc3 named as passed over", p, p.vpc(d))
	}

	h.soldOut.mark("sfo3", "s-1vcpu-1gb", "Size is not available in this region.")
	h.soldOut.mark("ams3", "s-1vcpu-1gb", "Region is not available")
	// nyc3's refusal is the oldest: it is tried again first.
	h.soldOut.at[regionSize{"nyc3", "s-1vcpu-1gb"}] = soldOut{at: time.Now().Add(-50 * time.Minute), message: "x"}
	if p := h.place(d); p.region != "" || p.retry > 10*time.Minute || p.retry < 9*time.Minute || len(p.passed) != 3 {
		t.Errorf("every region sold out: %+v; want no region, retried in about 10 min, three regions named", p)
	}

	// Past the pause a region is tried again.
	h.soldOut.at[regionSize{"nyc3", "s-1vcpu-1gb"}] = soldOut{at: time.Now().Add(-time.Hour), message: "x"}
	if p := h.place(d); p.region != "nyc3" {
		t.Errorf("nyc3's pause over: %+v, want nyc3", p)
	}
}
