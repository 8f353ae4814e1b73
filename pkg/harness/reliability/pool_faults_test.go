package reliability

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPoolUnderFaults fills a pool of 3 and lets 5 VMs claim from it while
// DigitalOcean fails 20% of requests with a 503 (not applied) and applies
// 5% before dropping the answer, on every route: the members' creates, the
// claimed droplets' tagging, the refills and the VMs' own creates. Each
// claim makes one refill and each VM without a claim one create, so
// DigitalOcean must have applied exactly 3 + 5 droplet creates (and keys,
// one per member or VM), whatever the split; no droplet may carry two VMs'
// tags, and ending the event and deleting the VMs must leave nothing.
func TestPoolUnderFaults(t *testing.T) {
	const size, n = 3, 5
	w := newWorld(t, worldOptions{fake: fakedo.Options{BootDelay: time.Second, Seed: 18}, bootResync: time.Second})
	w.do.SetFaults(fakedo.Faults{Rules: map[string]fakedo.FaultRule{fakedo.AnyRoute: {
		ErrorRate: 0.20, ErrorStatus: http.StatusServiceUnavailable, DropResponseAfterApply: 0.05,
		LatencyJitter: 200 * time.Millisecond,
	}}})
	dups := w.watchDuplicates(100 * time.Millisecond)
	env := w.poolEnv("faulty", size, nil)
	w.startEvent(poolEvent, env)
	w.waitPoolReady(2*time.Minute, size)

	names := w.createVMs(env, "f", n)
	w.waitRunning(2*time.Minute, names...)
	claims := 0
	for _, vm := range names {
		if w.claimed(vm) {
			claims++
		}
	}
	if claims == 0 {
		t.Error("no VM took a pool droplet")
	}
	w.eventually(2*time.Minute, "pool refilled, one droplet per VM", func() string { return w.poolInvariants(names, size) })
	if d, k := w.appliedCreates(); d != size+n || k != size+n {
		t.Errorf("DigitalOcean applied %d droplet and %d key creates, want %d each (%d claims); requests:%s", d, k, size+n, claims, counts(w.do.RequestCounts()))
	}
	t.Logf("%d of %d VMs claimed; %d requests, %d dropped answers", claims, n, len(w.do.Requests()), droppedAnswers(w.do.Requests()))

	w.drainAndDeleteAll(poolEvent, names, 2*time.Minute)
	dups.halt()
	dups.check(t)
	if d, _ := w.appliedCreates(); d != size+n {
		t.Errorf("after the deletes DigitalOcean had applied %d droplet creates, want %d", d, size+n)
	}
}

func droppedAnswers(records []fakedo.RequestRecord) int {
	n := 0
	for _, r := range records {
		if r.Dropped {
			n++
		}
	}
	return n
}

// TestSweepSparesPoolDroplets runs the orphan sweep every 2 s with no
// grace while a pool of 2 fills and sits: it must never take a member's
// droplet, booting or ready. A droplet tagged as a member of the live pool
// that no member Droplet knows, and one of a pool that no longer exists
// (its Environment deleted), are swept. Deleting the Environment itself
// takes its pool's droplets with it.
func TestSweepSparesPoolDroplets(t *testing.T) {
	w := newWorld(t, worldOptions{sweepInterval: 2 * time.Second, orphanGrace: time.Millisecond})
	keep := w.poolEnv("keep", 2, nil)
	gone := w.poolEnv("gone", 1, nil)
	w.startEvent(poolEvent, keep)
	w.startEvent("event-2", gone)
	w.eventually(2*time.Minute, "both pools ready", func() string {
		pools, err := w.pools()
		if err != nil {
			return err.Error()
		}
		ready := 0
		for _, p := range pools {
			ready += p.Status.Ready
		}
		if len(pools) != 2 || ready != 3 {
			return poolsShown(pools)
		}
		return ""
	})
	pools, err := w.pools()
	if err != nil {
		t.Fatal(err)
	}
	var keepUID, goneUID string
	for _, p := range pools {
		if p.Spec.Environment == keep.Name {
			keepUID = string(p.UID)
		} else {
			goneUID = string(p.UID)
		}
	}
	members := map[int]bool{}
	for _, d := range w.do.Droplets(w.token) {
		members[d.ID] = true
	}

	// Gone with its Environment: the GC deletes the pool, its members and
	// so their droplets.
	if err := w.hf.Envs.Delete(w.ns, gone.Name, &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.eventually(time.Minute, "the deleted Environment's pool droplet gone", func() string {
		if n := len(w.do.Droplets(w.token)); n != 2 {
			return fmt.Sprintf("%d droplets, want the kept pool's 2", n)
		}
		return ""
	})

	outOfBand := func(name, poolUID string) int {
		return w.do.CreateDropletOutOfBand(w.token, godo.DropletCreateRequest{
			Name: name, Region: "nyc1", Size: "s-1vcpu-1gb", Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"},
			Tags: digitalocean.PoolDropletTags(w.ns, w.ns, randomUID(), poolUID, nil),
		}).ID
	}
	unknownMember := outOfBand("hfdo-pool-unknown", keepUID)
	oldPool := outOfBand("hfdo-pool-old", goneUID)

	w.eventually(30*time.Second, "pool orphans swept", func() string {
		ids := map[int]bool{}
		for _, d := range w.do.Droplets(w.token) {
			ids[d.ID] = true
		}
		if ids[unknownMember] || ids[oldPool] {
			return fmt.Sprintf("unknown member present %v, old pool's present %v", ids[unknownMember], ids[oldPool])
		}
		return ""
	})
	// A few more sweeps: the kept pool's members stay.
	time.Sleep(3 * 2 * time.Second)
	var kept int
	for _, d := range w.do.Droplets(w.token) {
		if members[d.ID] {
			kept++
		}
	}
	if kept != 2 {
		t.Errorf("the sweep took the live pool's droplets: %d of 2 left", kept)
	}
	w.waitPoolReady(30*time.Second, 2)

	// Droplets and Keys go with the drain, the members' Secrets a pass
	// after (warmpool's partialGrace).
	w.endEvent(poolEvent)
	w.waitAllGone(2 * time.Minute)
}

func randomUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// TestAtomicClaims proves claims are atomic: 50 VMs arrive at once
// against a ready pool of 10, with 5 workers, and the controller is
// SIGKILLed and restarted twice while they claim. Each pool droplet goes
// to at most one VM, every VM runs, and DigitalOcean holds exactly 50 + 10
// droplets, made by exactly 60 applied creates; nothing is left after the
// drain and the deletes.
func TestAtomicClaims(t *testing.T) { atomicClaims(t, false) }

// TestAtomicClaimsAuto is TestAtomicClaims with warm_pool: auto up to 10:
// the pool holds 10 before the first arrival, then sizes itself from the
// arrivals while they claim and the controller is killed. The same holds,
// but the pool at rest is its chosen size and, as the refills depend on
// it, the creates are checked against the droplets DigitalOcean held.
func TestAtomicClaimsAuto(t *testing.T) { atomicClaims(t, true) }

func atomicClaims(t *testing.T, auto bool) {
	const size, n = 10, 50
	bin := buildController(t)
	w := newWorld(t, worldOptions{noController: true, workers: 5})
	r := newCrashRun(w, bin)
	env := w.poolEnv("atomic", size, autoPool(auto, size, &w.app))
	seen := w.watchNames(100 * time.Millisecond)
	w.startEvent(poolEvent, env)
	r.start()
	w.waitPoolReady(2*time.Minute, size)
	dups := w.watchDuplicates(100 * time.Millisecond)

	names := w.createVMs(env, "a", n)
	// Counted on the VMs' Droplets, which keep the claim: the handover
	// deletes a claimed member moments after its claim.
	w.eventually(time.Minute, "first claims", func() string {
		if c := w.claims(names); c < 2 {
			return fmt.Sprintf("%d claims", c)
		}
		return ""
	})
	r.kill()
	r.start()
	w.eventually(2*time.Minute, "half the VMs running", func() string {
		if c := w.runningCount(names); c < n/2 {
			return fmt.Sprintf("%d running", c)
		}
		return ""
	})
	r.kill()
	r.start()

	w.waitRunning(3*time.Minute, names...)
	byDroplet := map[int]string{}
	claims := 0
	for _, vm := range names {
		d, err := w.drops.Get(w.ns, vm, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Spec.ClaimedDropletID == 0 {
			continue
		}
		claims++
		if other, ok := byDroplet[d.Spec.ClaimedDropletID]; ok {
			t.Errorf("pool droplet %d claimed by %s and %s", d.Spec.ClaimedDropletID, other, vm)
		}
		byDroplet[d.Spec.ClaimedDropletID] = vm
	}
	if claims == 0 {
		t.Error("no VM took a pool droplet")
	}
	w.eventually(2*time.Minute, "pool refilled, one droplet per VM", func() string { return w.poolInvariants(names, w.restingSize(size)) })
	// A kill between a member's Key and its Droplet leaves a partial set
	// whose key the next process deletes (warmpool's cleanupPartial) and
	// replaces: at most one such key per kill, and none may be left.
	const kills = 2
	creates := size + n
	if auto {
		creates = seen.distinct()
	}
	if d, k := w.appliedCreates(); d != creates || k < d || k > d+kills {
		t.Errorf("DigitalOcean applied %d droplet and %d key creates, want %d droplet creates and %d–%d key creates (%d claims); requests:%s",
			d, k, creates, creates, creates+kills, claims, counts(w.do.RequestCounts()))
	}
	t.Logf("%d of %d VMs claimed a pool droplet", claims, n)
	dups.halt()
	dups.check(t)

	w.drainAndDeleteAll(poolEvent, names, 3*time.Minute)
}

// runningCount is how many of names run with an address.
func (w *world) runningCount(names []string) int {
	list, err := w.hf.VMs.List(w.ns, metav1.ListOptions{})
	if err != nil {
		return 0
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	c := 0
	for _, vm := range list.Items {
		if want[vm.Name] && vm.Status.Status == hfv1.VmStatusRunning && vm.Status.PublicIP != "" {
			c++
		}
	}
	return c
}
