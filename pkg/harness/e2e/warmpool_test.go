package e2e

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/virtualmachine"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/warmpool"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// drainWithin is the pool controller's resync period plus 10 s: how long
// a pool may take to drain after its event ends.
const drainWithin = warmpool.DefaultResync + 10*time.Second

var pooledUbuntu = warmpool.PoolName("pooled", "ubuntu")

// startPoolEvent makes the scheduled event "ev" that asks for ubuntu VMs
// of the Environment "pooled" active.
func (w *world) startPoolEvent() {
	w.t.Helper()
	if _, err := w.hf.StartEvent(w.ns, "ev", map[string]map[string]int{"pooled": {"ubuntu": 10}}); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) pools() provcontrollers.WarmPoolClient {
	w.t.Helper()
	prov, err := provisioning.NewFactoryFromConfig(testenv.Require(w.t).Config())
	if err != nil {
		w.t.Fatal(err)
	}
	return prov.Provisioning().V1alpha1().WarmPool()
}

// fakeCounts is what the fake DigitalOcean holds: droplets and SSH keys.
func (w *world) fakeCounts() (droplets, keys int) {
	return len(w.do.Droplets(testToken)), len(w.do.Keys(testToken))
}

func (w *world) waitFakeEmpty(within time.Duration, what string) {
	w.t.Helper()
	w.eventually(within, what, func() string {
		if d, k := w.fakeCounts(); d != 0 || k != 0 {
			return fmt.Sprintf("DigitalOcean holds %d droplets and %d keys", d, k)
		}
		return ""
	})
}

// setEnvironment changes the Environment "pooled", retrying on conflicts.
func (w *world) setEnvironment(change func(specifics map[string]string, ubuntu map[string]string)) {
	w.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		env, err := w.hf.Envs.Get(w.ns, "pooled", metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(env.Spec.EnvironmentSpecifics, env.Spec.TemplateMapping["ubuntu"])
		_, err = w.hf.Envs.Update(env)
		return err
	})
	if err != nil {
		w.t.Fatal(err)
	}
}

// liveMembers are the unclaimed members not being deleted.
func (w *world) liveMembers() []*v1alpha1.Droplet {
	var out []*v1alpha1.Droplet
	for _, d := range w.poolMembers() {
		if d.DeletionTimestamp == nil && d.Status.Claim == nil {
			out = append(out, d)
		}
	}
	return out
}

// TestWarmPoolFollowsItsEvent: without an active event the pool holds
// nothing; while one is active it fills to warm_pool ready droplets, each
// with its own key, and kubectl shows it; the event's end drains it to 0
// droplets and 0 keys in DigitalOcean.
func TestWarmPoolFollowsItsEvent(t *testing.T) {
	addr := freeAddr(t)
	w, _ := poolWorld(t, worldOptions{metricsAddr: addr}, 3, false)
	w.eventually(30*time.Second, "the WarmPool", func() string {
		if _, why := w.printed("warmpools", pooledUbuntu); why != "" {
			return why
		}
		return ""
	})
	// Not a timing target: long enough for a fill to show if one started.
	for range 6 {
		if n := len(w.poolMembers()); n != 0 {
			t.Fatalf("%d pool members without an active event, want 0", n)
		}
		time.Sleep(500 * time.Millisecond)
	}

	w.startPoolEvent()
	w.waitPoolReady(3)
	w.eventually(30*time.Second, "kubectl get warmpools showing 3 wanted and 3 ready", func() string {
		row, why := w.printed("warmpools", pooledUbuntu)
		if why != "" {
			return why
		}
		if row.cells["Environment"] != "pooled" || row.cells["Template"] != "ubuntu" || row.cells["Wanted"] != "3" || row.cells["Ready"] != "3" || row.cells["Booting"] != "0" {
			return row.String()
		}
		return ""
	})
	w.eventually(30*time.Second, "3 member droplets and no key", func() string {
		// A member's own key is deleted once its droplet exists.
		if d, k := w.fakeCounts(); d != 3 || k != 0 {
			return fmt.Sprintf("DigitalOcean holds %d droplets and %d keys, want 3 and 0", d, k)
		}
		return ""
	})
	w.eventually(30*time.Second, "the pool's size and cost in the metrics", func() string {
		body := scrape(t, addr)
		for _, want := range []string{
			`hf_do_warm_pool_size{environment="pooled",state="wanted",template="ubuntu"} 3`,
			`hf_do_warm_pool_size{environment="pooled",state="ready",template="ubuntu"} 3`,
		} {
			if !strings.Contains(body, want+"\n") {
				return "no " + want
			}
		}
		if !regexp.MustCompile(`(?m)^hf_do_hourly_cost_dollars\{environment="pooled",scheduled_event="warm-pool"\} 0\.0[0-9]+$`).MatchString(body) {
			return "no hourly cost of the pool under scheduled_event warm-pool"
		}
		return ""
	})
	for _, d := range w.do.Droplets(testToken) {
		pool, err := w.pools().Get(w.ns, pooledUbuntu, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(d.Tags, digitalocean.PoolTag(string(pool.UID))) || d.Size.Slug != "s-1vcpu-1gb" {
			t.Errorf("droplet %d: tags %v size %s, want the pool's tag and the template's size", d.ID, d.Tags, d.Size.Slug)
		}
	}

	if _, err := w.hf.EndEvent(w.ns, "ev"); err != nil {
		t.Fatal(err)
	}
	w.waitFakeEmpty(drainWithin, "the pool drained after the event's end")
	// Events are recorded asynchronously: the drain may finish first.
	w.eventually(10*time.Second, "a draining Event on the pool", func() string {
		if got := w.events("WarmPool", pooledUbuntu); !hasEvent(got, "draining: no running event") {
			return fmt.Sprint(got)
		}
		return ""
	})
}

// TestWarmPoolDrainsWithItsEnvironment: deleting the Environment deletes
// the pool and its droplets and keys.
func TestWarmPoolDrainsWithItsEnvironment(t *testing.T) {
	w, _ := poolWorld(t, worldOptions{}, 2, false)
	w.startPoolEvent()
	w.waitPoolReady(2)
	if err := w.hf.Envs.Delete(w.ns, "pooled", &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.waitFakeEmpty(drainWithin, "the pool drained after its Environment's deletion")
	w.eventually(30*time.Second, "the WarmPool gone", func() string {
		if _, err := w.pools().Get(w.ns, pooledUbuntu, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Sprintf("still there (%v)", err)
		}
		return ""
	})
}

// TestWarmPoolReplacesMembersOfAnOldRequest: editing the Environment's
// size replaces every member with one of the new size.
func TestWarmPoolReplacesMembersOfAnOldRequest(t *testing.T) {
	w, _ := poolWorld(t, worldOptions{}, 2, false)
	w.startPoolEvent()
	old := w.waitPoolReady(2)
	w.setEnvironment(func(_, ubuntu map[string]string) { ubuntu["size"] = "s-2vcpu-2gb" })
	w.eventually(90*time.Second, "2 ready members of the new size, and only them", func() string {
		members := map[int]bool{}
		for _, d := range w.liveMembers() {
			if v1alpha1.Ready.IsTrue(d) && v1alpha1.Reachable.IsTrue(d) {
				members[d.Status.DropletID] = true
			}
		}
		if len(members) != 2 {
			return fmt.Sprintf("%d ready members", len(members))
		}
		for id := range members {
			if _, isOld := old[id]; isOld {
				return fmt.Sprintf("droplet %d of the old size is still a ready member", id)
			}
		}
		droplets := w.do.Droplets(testToken)
		if len(droplets) != 2 {
			return fmt.Sprintf("DigitalOcean holds %d droplets, want 2", len(droplets))
		}
		for _, d := range droplets {
			if d.Size.Slug != "s-2vcpu-2gb" {
				return fmt.Sprintf("droplet %d has size %s", d.ID, d.Size.Slug)
			}
		}
		return ""
	})
}

// TestLoweringWarmPoolDrainsOldestFirst: from 3 ready members, lowering
// warm_pool to 2 deletes the oldest.
func TestLoweringWarmPoolDrainsOldestFirst(t *testing.T) {
	w, _ := poolWorld(t, worldOptions{}, 1, false)
	w.startPoolEvent()
	first := w.waitPoolReady(1)
	var oldest *v1alpha1.Droplet
	for _, d := range w.liveMembers() {
		oldest = d
	}
	// Creation times have a resolution of a second: let the others be later.
	w.eventually(5*time.Second, "a second later than the first member", func() string {
		if !time.Now().Truncate(time.Second).After(oldest.CreationTimestamp.Time) {
			return "same second"
		}
		return ""
	})
	w.setEnvironment(func(specifics, _ map[string]string) { specifics["warm_pool"] = "3" })
	w.waitPoolReady(3)
	w.setEnvironment(func(specifics, _ map[string]string) { specifics["warm_pool"] = strconv.Itoa(2) })
	w.eventually(60*time.Second, "the oldest member drained, the 2 newer kept", func() string {
		var live []string
		for _, d := range w.liveMembers() {
			live = append(live, d.Name)
		}
		if len(live) != 2 || slices.Contains(live, oldest.Name) {
			return fmt.Sprintf("live members %v; the oldest is %s", live, oldest.Name)
		}
		if n := len(w.do.Droplets(testToken)); n != 2 {
			return fmt.Sprintf("DigitalOcean holds %d droplets", n)
		}
		return ""
	})
	for id := range first {
		if _, ok := w.fakeDroplet(id); ok {
			t.Errorf("the oldest member's droplet %d is still in DigitalOcean", id)
		}
	}
}

// TestWarmPoolCountsClaimsAndRefills: once a VM holds the droplet it took,
// the member is released (its droplet stays), the pool counts the claim
// and refills.
func TestWarmPoolCountsClaimsAndRefills(t *testing.T) {
	w, env := poolWorld(t, worldOptions{}, 1, false)
	w.startPoolEvent()
	taken := w.waitPoolReady(1)
	w.createVM("taker", env, "ubuntu")
	w.waitRunning("taker")
	w.eventually(60*time.Second, "the claim counted and the pool refilled", func() string {
		row, why := w.printed("warmpools", pooledUbuntu)
		if why != "" {
			return why
		}
		if row.cells["Claims"] != "1" || row.cells["Ready"] != "1" {
			return row.String()
		}
		for _, d := range w.poolMembers() {
			if _, isTaken := taken[d.Status.DropletID]; isTaken {
				return fmt.Sprintf("member %s of the taken droplet is still there", d.Name)
			}
		}
		return ""
	})
	for id := range taken {
		if _, ok := w.fakeDroplet(id); !ok || w.droplet("taker").Status.DropletID != id {
			t.Errorf("the taken droplet %d is gone or not the VM's", id)
		}
	}
	if d, _ := w.fakeCounts(); d != 2 {
		t.Errorf("DigitalOcean holds %d droplets, want 2: the VM's and the refill", d)
	}
}

// TestWarmPoolWithAPlainTokenOrASharedKey: with a plain-text token the
// pool keeps its own copy of it; under ssh_key_scope environment the
// members use the Environment's one key. Both fill and drain.
func TestWarmPoolWithAPlainTokenOrASharedKey(t *testing.T) {
	w := newWorld(t, worldOptions{})
	w.standardEnv("plain") // creates the templates
	w.createEnv(gargantuasim.Environment(w.ns, "pooled",
		map[string]string{"region": "nyc1", "token": testToken, "warm_pool": "2"},
		map[string]map[string]string{"ubuntu": {"size": "s-1vcpu-1gb"}}))
	w.startPoolEvent()
	w.waitPoolReady(2)
	if _, err := w.hf.Secrets.Get(w.ns, pooledUbuntu+"-token", metav1.GetOptions{}); err != nil {
		t.Errorf("the pool's copy of the plain-text token: %v", err)
	}
	w.eventually(30*time.Second, "2 member droplets and no key", func() string {
		if d, k := w.fakeCounts(); d != 2 || k != 0 {
			return fmt.Sprintf("DigitalOcean holds %d droplets and %d keys, want 2 and 0 (a member's own key goes once its droplet exists)", d, k)
		}
		return ""
	})

	w.setEnvironment(func(specifics, _ map[string]string) { specifics["ssh_key_scope"] = "environment" })
	w.eventually(90*time.Second, "2 members with the shared key, and only them", func() string {
		live := w.liveMembers()
		if len(live) != 2 {
			return fmt.Sprintf("%d live members", len(live))
		}
		for _, d := range live {
			if !slices.Equal(d.Spec.KeyRefs, []string{virtualmachine.SharedKeyName("pooled")}) || !v1alpha1.Reachable.IsTrue(d) {
				return fmt.Sprintf("member %s: keys %v, reachable %s", d.Name, d.Spec.KeyRefs, v1alpha1.Reachable.GetStatus(d))
			}
		}
		if d, k := w.fakeCounts(); d != 2 || k != 1 {
			return fmt.Sprintf("DigitalOcean holds %d droplets and %d keys, want 2 and the shared one", d, k)
		}
		return ""
	})
	if _, err := w.hf.EndEvent(w.ns, "ev"); err != nil {
		t.Fatal(err)
	}
	w.eventually(drainWithin, "the pool drained", func() string {
		if d := len(w.do.Droplets(testToken)); d != 0 {
			return fmt.Sprintf("DigitalOcean holds %d droplets", d)
		}
		return ""
	})
}
