package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/virtualmachine"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
)

const (
	soldOutSize = "s-1vcpu-1gb" // the ubuntu template's size
	vpcNYC3     = "11111111-1111-4111-8111-111111111111"
	vpcSFO3     = "22222222-2222-4222-8222-222222222222"
)

// regionsEnv is the standard Environment with region set to regions and,
// under ssh_key_scope environment, its VMs' creates sharing multi-creates.
func (w *world) regionsEnv(regions string, extra map[string]string) *hfv1.Environment {
	w.t.Helper()
	env := w.standardEnv("env")
	specifics := map[string]string{"region": regions, "token-secret": tokenSecret, "ssh_key_scope": "environment"}
	for k, v := range extra {
		specifics[k] = v
	}
	w.setSpecifics(env.Name, specifics)
	return env
}

// regionsOfDroplets counts the fake's droplets by region.
func (w *world) regionsOfDroplets() map[string]int {
	out := map[string]int{}
	for _, d := range w.do.Droplets(testToken) {
		out[d.Region.Slug]++
	}
	return out
}

func TestSoldOutRegionSendsCreatesToTheNextRegion(t *testing.T) {
	w := newWorld(t, worldOptions{soldOutPause: time.Hour})
	env := w.regionsEnv("nyc3,sfo3", nil)
	// Three fit, the fourth on finds nyc3 sold out, mid-flood.
	w.do.SellOut("nyc3", soldOutSize, 3)
	var names []string
	for i := 1; i <= 8; i++ {
		names = append(names, fmt.Sprintf("vm-%d", i))
		w.createVM(names[i-1], env, "ubuntu")
	}
	w.waitRunning(names...)

	if got := w.regionsOfDroplets(); got["nyc3"] > 3 || got["nyc3"]+got["sfo3"] != len(names) {
		t.Errorf("droplets by region %v: want at most 3 in nyc3 and one droplet per VM, the rest in sfo3", got)
	}
	fellBack := 0
	for _, name := range names {
		d := w.droplet(name)
		if got, _ := w.fakeDroplet(d.Status.DropletID); got.Region == nil || d.Status.Region != got.Region.Slug {
			t.Errorf("%s: status.region %q, DigitalOcean says %v", name, d.Status.Region, got.Region)
		}
		if d.Status.Region != "sfo3" {
			continue
		}
		fellBack++
		if event := virtualmachine.ReasonRegionFallback + ": droplet"; !hasEvent(w.vmEvents(name), event) {
			t.Errorf("%s went to sfo3 without an Event %q saying why; Events %q", name, event, w.vmEvents(name))
		} else if !hasEvent(w.vmEvents(name), "instead of nyc3 (sold out of "+soldOutSize) {
			t.Errorf("%s's fallback Event does not say nyc3 was sold out: %q", name, w.vmEvents(name))
		}
	}
	if fellBack == 0 {
		t.Error("no VM went to sfo3")
	}
}

func TestSoldOutRegionIsTriedAgainAfterThePause(t *testing.T) {
	const pause = 2 * time.Second
	w := newWorld(t, worldOptions{soldOutPause: pause})
	env := w.regionsEnv("nyc3,sfo3", nil)
	w.do.SellOut("nyc3", soldOutSize, 0)
	w.createVM("vm-1", env, "ubuntu")
	w.waitRunning("vm-1")
	if got := w.droplet("vm-1").Status.Region; got != "sfo3" {
		t.Fatalf("vm-1 with nyc3 sold out is in %q, want sfo3", got)
	}

	w.do.Restock("nyc3", soldOutSize)
	time.Sleep(pause)
	w.createVM("vm-2", env, "ubuntu")
	w.waitRunning("vm-2")
	if got := w.droplet("vm-2").Status.Region; got != "nyc3" {
		t.Errorf("vm-2, created after nyc3's pause with nyc3 restocked, is in %q, want nyc3", got)
	}
}

func TestRegionListTakesEachRegionsVPC(t *testing.T) {
	w := newWorld(t, worldOptions{soldOutPause: time.Hour})
	env := w.regionsEnv("nyc3,sfo3", map[string]string{"vpc_uuid": "nyc3=" + vpcNYC3 + ",sfo3=" + vpcSFO3})
	w.createVM("vm-1", env, "ubuntu")
	w.waitRunning("vm-1")
	w.do.SellOut("nyc3", soldOutSize, 0)
	w.createVM("vm-2", env, "ubuntu")
	w.waitRunning("vm-2")

	for name, want := range map[string][2]string{"vm-1": {"nyc3", vpcNYC3}, "vm-2": {"sfo3", vpcSFO3}} {
		d := w.droplet(name)
		got, _ := w.fakeDroplet(d.Status.DropletID)
		if got.Region == nil || got.Region.Slug != want[0] || got.VPCUUID != want[1] {
			t.Errorf("%s's droplet is in %v with VPC %q, want %s with VPC %s", name, got.Region, got.VPCUUID, want[0], want[1])
		}
	}
}

func TestEveryListedRegionSoldOutFailsTheVMAndSendsNothingMore(t *testing.T) {
	w := newWorld(t, worldOptions{soldOutPause: time.Hour})
	env := w.regionsEnv("nyc3,sfo3", nil)
	w.do.SellOut("nyc3", soldOutSize, 0)
	w.do.SellOut("sfo3", soldOutSize, 0)
	w.createVM("vm-1", env, "ubuntu")
	w.eventually(30*time.Second, "vm-1 failed, every region sold out", func() string {
		if s := w.vm("vm-1").Status.Status; s != virtualmachine.VMStatusErrorDuringProvisioning {
			return fmt.Sprintf("vm-1 is %q", s)
		}
		return expectCondition(w.droplet("vm-1"), v1alpha1.Created, v1alpha1.ReasonSoldOut, "every listed region is sold out of "+soldOutSize)
	})
	message := v1alpha1.Created.GetMessage(w.droplet("vm-1"))
	for _, part := range []string{"nyc3 (sold out", "sfo3 (sold out", "add a region to region in Environment"} {
		if !strings.Contains(message, part) {
			t.Errorf("message %q lacks %q", message, part)
		}
	}
	// Each region refused once; the create waits for the pause, sending nothing.
	creates := w.do.RouteRequests(fakedo.RouteCreateDroplets)
	w.createVM("vm-2", env, "ubuntu")
	w.eventually(30*time.Second, "vm-2 failed too", w.statusIs("vm-2", virtualmachine.VMStatusErrorDuringProvisioning))
	if n := len(w.do.Droplets(testToken)); n != 0 {
		t.Errorf("%d droplets made in sold-out regions", n)
	}
	if after := w.do.RouteRequests(fakedo.RouteCreateDroplets); after != creates {
		t.Errorf("%d create requests sent once every region was known sold out, want none", after-creates)
	}
}

// westOnlySize is offered in sfo3 alone.
const westOnlySize = "s-2vcpu-4gb-west"

func TestEveryListedRegionIsCheckedBeforeAnyCreate(t *testing.T) {
	w := newWorld(t, worldOptions{fake: fakedo.Options{ExtraSizes: []godo.Size{{
		Slug: westOnlySize, Memory: 4096, Vcpus: 2, Disk: 80, PriceMonthly: 24, PriceHourly: 0.0357, Regions: []string{"sfo3"}, Available: true,
	}}}})
	env := w.regionsEnv("nyc3,sfo3", nil)
	w.mapUbuntu(env.Name, map[string]string{"size": westOnlySize})

	// One region that can serve: nyc3 is a warning, the config valid, and
	// creates pass nyc3 over without asking DigitalOcean.
	w.createVMAfterReport("vm-1", env.Name, "ubuntu", "Warning NotInRegion", `size "`+westOnlySize+`" is not offered in region "nyc3"`,
		"creates go to the other listed regions instead")
	w.waitRunning("vm-1")
	if got := w.droplet("vm-1").Status.Region; got != "sfo3" {
		t.Errorf("vm-1 is in %q, want sfo3, the one listed region offering its size", got)
	}
	if n := w.do.RouteRequests(fakedo.RouteCreateDroplets, "422"); n != 0 {
		t.Errorf("%d creates refused: nyc3, which the catalog says lacks the size, was asked", n)
	}

	// No region that can serve: an error for each.
	w.setSpecifics(env.Name, map[string]string{"region": "nyc3,ams3", "token-secret": tokenSecret})
	// No region that can serve: an error for each, told as such.
	for _, region := range []string{"nyc3", "ams3"} {
		w.eventually(30*time.Second, "the config is invalid in "+region, func() string {
			for _, e := range w.events("Environment", env.Name) {
				if strings.Contains(e, `Warning NotInRegion: template_mapping[ubuntu].size: size "`+westOnlySize+`" is not offered in region "`+region+`"`) &&
					!strings.Contains(e, "creates go to the other listed regions") {
					return ""
				}
			}
			return fmt.Sprintf("no error for %s among %q", region, w.events("Environment", env.Name))
		})
	}
}

// A warm pool fills where the next create goes, and a VM takes its member
// whatever the member's region.
func TestWarmPoolFillsTheFallbackRegionAndItsMembersAreTaken(t *testing.T) {
	w := newWorld(t, worldOptions{soldOutPause: time.Hour})
	w.standardEnv("plain") // creates the templates
	w.do.SellOut("nyc3", soldOutSize, 0)
	env := w.createEnv(gargantuasim.Environment(w.ns, "pooled",
		map[string]string{"region": "nyc3,sfo3", "token-secret": tokenSecret, "warm_pool": "1"},
		map[string]map[string]string{"ubuntu": {"size": soldOutSize}}))
	w.setEvent("ev", env, true)
	ready := w.waitPoolReady(1)
	for id := range ready {
		if got, _ := w.fakeDroplet(id); got.Region == nil || got.Region.Slug != "sfo3" {
			t.Fatalf("pool member %d is in %v, want sfo3 (nyc3 is sold out)", id, got.Region)
		}
	}

	w.createVM("vm-1", env, "ubuntu")
	w.waitRunning("vm-1")
	d := w.droplet("vm-1")
	if _, fromPool := ready[d.Spec.ClaimedDropletID]; !fromPool || d.Status.Region != "sfo3" {
		t.Errorf("vm-1 has droplet %d in %q (claimed %d), want the sfo3 pool member among %v", d.Status.DropletID, d.Status.Region, d.Spec.ClaimedDropletID, ready)
	}
}
