package reliability

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/app"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/warmpool"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
)

// autoSurplusIdle is how long an auto-sized pool's surplus waits in these
// tests, so a shrink is seen within a test's minutes.
const autoSurplusIdle = 5 * time.Second

// autoPool is the config of a pool sized by warm_pool: auto up to max
// (nil, a fixed pool, unless auto), and sets the controller's surplus wait
// short.
func autoPool(auto bool, max int, o *app.Options) map[string]string {
	if !auto {
		return nil
	}
	o.WarmPoolSurplusIdle = autoSurplusIdle
	return map[string]string{warmPoolKey: "auto", "warm_pool_max": strconv.Itoa(max)}
}

// restingSize is what the namespace's one pool holds at rest: size for a
// fixed pool, the size it chose for an auto-sized one.
func (w *world) restingSize(size int) int {
	pools, err := w.pools()
	if err != nil || len(pools) != 1 || !pools[0].Spec.Auto {
		return size
	}
	return pools[0].Status.Wanted
}

// nameWatch samples DigitalOcean and remembers each droplet name with the
// IDs seen under it: a droplet created twice for one member or VM shows as
// a name with two IDs, or as more applied creates than names.
type nameWatch struct {
	*sampler
	mu  sync.Mutex
	ids map[string]map[int]bool
}

func (w *world) watchNames(interval time.Duration) *nameWatch {
	n := &nameWatch{ids: map[string]map[int]bool{}}
	n.sampler = w.sample(interval, func() {
		live := w.do.Droplets(w.token)
		n.mu.Lock()
		defer n.mu.Unlock()
		for _, d := range live {
			if n.ids[d.Name] == nil {
				n.ids[d.Name] = map[int]bool{}
			}
			n.ids[d.Name][d.ID] = true
		}
	})
	return n
}

// distinct is how many droplet names were seen.
func (n *nameWatch) distinct() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.ids)
}

// twice lists the names seen with more than one droplet.
func (n *nameWatch) twice() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for name, ids := range n.ids {
		if len(ids) > 1 {
			out = append(out, fmt.Sprintf("%s: %d droplets", name, len(ids)))
		}
	}
	return out
}

// waitAutoSize waits until the one pool chose a size from low to high,
// wants it and holds it ready, and DigitalOcean holds exactly vms' droplets
// and the pool's. A range, since the size follows the learned refill time,
// which the machine's load stretches.
func (w *world) waitAutoSize(timeout time.Duration, low, high int, vms []string) {
	w.t.Helper()
	w.eventually(timeout, fmt.Sprintf("the auto-sized pool at %d to %d", low, high), func() string {
		pools, err := w.pools()
		if err != nil {
			return err.Error()
		}
		if len(pools) != 1 || pools[0].Status.Auto == nil {
			return "pools: " + poolsShown(pools) + autoShown(pools)
		}
		size := pools[0].Status.Auto.Size
		if size < low || size > high || pools[0].Status.Wanted != size {
			return "pools: " + poolsShown(pools) + autoShown(pools)
		}
		return w.poolInvariants(vms, size)
	})
}

func autoShown(pools []v1alpha1.WarmPool) string {
	var out []string
	for _, p := range pools {
		if a := p.Status.Auto; a != nil {
			out = append(out, fmt.Sprintf(" auto=%d (%s, %.1f/min, refill %d s)", a.Size, a.Basis, a.ArrivalsPerMinute, a.RefillSeconds))
		}
	}
	return strings.Join(out, ";")
}

// TestCrashWhileAutoPoolResizes SIGKILLs the controller while an
// auto-sized pool (warm_pool: auto, warm_pool_max: 5) shrinks and while it
// grows, and starts a new process each time. Before any arrival it holds 5.
// One VM arrives and claims: one arrival a minute against a refill of 10 to
// 40 s wants two or three droplets (99% of a Poisson count), so the pool
// keeps that many of the four left and deletes the rest once they have
// waited unclaimed (5 s here); the kill lands on such a delete. Then 20 VMs
// arrive at once: 21 within three minutes against that refill want at
// least 5, so the pool grows back to its max;
// the kill lands after a new member's object is written, before its
// droplet is created. After each restart the pool converges to its size,
// DigitalOcean holds exactly the VMs' droplets and the pool's, no droplet
// was created twice (by name) and none carries two VMs' tags; ending the
// event and deleting the VMs leaves nothing.
func TestCrashWhileAutoPoolResizes(t *testing.T) {
	const max = 5
	bin := buildController(t)
	// A 10 s boot makes the learned refill at least 10 s, which the sizes
	// above follow from whatever the machine's load.
	w := newWorld(t, worldOptions{noController: true, fake: fakedo.Options{BootDelay: 10 * time.Second}})
	r := &poolCrash{crashRun: newCrashRun(w, bin)}
	r.proxy = newKubeProxy(t, w.cfg)
	w.kubeconfig = r.proxy.kubeconfig
	r.env = w.poolEnv("resize", 0, autoPool(true, max, &w.app))
	seen := w.watchNames(100 * time.Millisecond)
	dups := w.watchDuplicates(100 * time.Millisecond)
	w.startEvent(poolEvent, r.env)
	r.start()
	w.waitAutoSize(2*time.Minute, max, max, nil)
	if pools, err := w.pools(); err != nil || pools[0].Status.Auto.Basis != warmpool.BasisStart {
		t.Fatalf("before any arrival: %v%s, want basis %s", err, autoShown(pools), warmpool.BasisStart)
	}

	// Shrink: the surplus member's droplet delete is held and the process killed.
	del := r.holdBeforeApply(fakedo.RouteDeleteDroplet)
	delByTag := r.holdBeforeApply(fakedo.RouteDeleteDropletsByTag)
	first := w.createVMs(r.env, "one", 1)
	r.awaitAny("the surplus member's droplet delete", del, delByTag)
	r.kill()
	del.Release()
	delByTag.Release()
	r.start()
	w.waitRunning(2*time.Minute, first...)
	w.waitAutoSize(2*time.Minute, 1, max-1, first)

	// Grow: a new member's Droplet object is written, its answer held, and
	// the process killed before the droplet is created.
	memberCreate := r.holdKubeAfter(func(req kubeRequest) bool {
		return req.Method == http.MethodPost && strings.HasSuffix(req.Path, "/droplets") &&
			strings.Contains(string(req.Body), v1alpha1.WarmPoolLabel)
	})
	burst := w.createVMs(r.env, "burst", 20)
	r.awaitKube(memberCreate, "a new member's Droplet create")
	r.kill()
	memberCreate.Release()
	r.start()
	all := append(first, burst...)
	w.waitRunning(3*time.Minute, all...)
	w.waitAutoSize(2*time.Minute, max, max, all)

	if twice := seen.twice(); len(twice) > 0 {
		t.Errorf("droplets created twice: %v", twice)
	}
	if d, _ := w.appliedCreates(); d != seen.distinct() {
		t.Errorf("DigitalOcean applied %d droplet creates for %d droplet names: a duplicate was made and deleted; requests:%s", d, seen.distinct(), counts(w.do.RequestCounts()))
	}
	w.drainAndDeleteAll(poolEvent, all, 2*time.Minute)
	seen.halt()
	dups.halt()
	dups.check(t)
}
