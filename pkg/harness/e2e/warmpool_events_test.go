package e2e

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// poolStatus is "" once the pool's status satisfies ok, else what it is.
func (w *world) poolStatus(ok func(v1alpha1.WarmPoolStatus) bool) string {
	pool, err := w.pools().Get(w.ns, pooledUbuntu, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	if !ok(pool.Status) {
		return fmt.Sprintf("pool status %+v", pool.Status)
	}
	return ""
}

// claimable counts the pool's ready, reachable, unclaimed members.
func (w *world) claimable() int {
	n := 0
	for _, d := range w.liveMembers() {
		if v1alpha1.Ready.IsTrue(d) && v1alpha1.Reachable.IsTrue(d) {
			n++
		}
	}
	return n
}

// fakeDropletIDs are the droplet IDs the fake DigitalOcean holds.
func (w *world) fakeDropletIDs() []int {
	var ids []int
	for _, d := range w.do.Droplets(testToken) {
		ids = append(ids, d.ID)
	}
	slices.Sort(ids)
	return ids
}

// holds fails the test if cond reports anything during d.
func (w *world) holds(d time.Duration, what string, cond func() string) {
	w.t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if got := cond(); got != "" {
			w.t.Fatalf("%s: %s", what, got)
		}
	}
}

// TestWarmPoolFillsAheadOfItsEventStart: Gargantua makes an event active
// the moment it is created; a pool for an event a day ahead holds nothing.
// Once the event's start time is moved close, the pool fills and is ready
// before the start time.
func TestWarmPoolFillsAheadOfItsEventStart(t *testing.T) {
	w, _ := poolWorld(t, worldOptions{}, 3, false)
	w.gargantua(gargantuasim.V3_3)
	now := time.Now()
	if _, err := w.hf.CreateEvent(w.ns, "ev", now.Add(24*time.Hour), now.Add(26*time.Hour), false,
		map[string]map[string]int{"pooled": {"ubuntu": 10}}); err != nil {
		t.Fatal(err)
	}
	w.eventually(60*time.Second, "the pool waiting for the event's start", func() string {
		return w.poolStatus(func(s v1alpha1.WarmPoolStatus) bool { return strings.HasPrefix(s.Message, "event ev starts at ") })
	})
	w.holds(time.Minute, "an active event a day ahead", func() string {
		if d, k := w.fakeCounts(); d != 0 || k != 0 {
			return fmt.Sprintf("DigitalOcean holds %d droplets and %d keys, want none", d, k)
		}
		return ""
	})

	// Closer than any lead (the refill time and at least a minute): the
	// pool fills at once, with the whole lead to get ready.
	start := time.Now().Add(150 * time.Second).Truncate(time.Second)
	if err := w.hf.EditEventTimes(w.ns, "ev", start, start.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	var readyAt time.Time
	w.eventually(time.Until(start)+90*time.Second, "3 claimable members", func() string {
		if n := w.claimable(); n < 3 {
			return fmt.Sprintf("%d claimable", n)
		}
		readyAt = time.Now()
		return ""
	})
	if !readyAt.Before(start) {
		t.Errorf("the pool was ready at %s, not before its event's start time %s", readyAt, start)
	}
}

// TestWarmPoolKeepsItsDropletsWhenARunningEventIsEdited: an admin's edit
// of a running event's end time unprovisions it for a moment, as
// Gargantua's admin API does; the pool keeps its droplets.
func TestWarmPoolKeepsItsDropletsWhenARunningEventIsEdited(t *testing.T) {
	w, _ := poolWorld(t, worldOptions{}, 2, false)
	w.gargantua(gargantuasim.V3_3)
	start := time.Now().Add(-time.Minute)
	if _, err := w.hf.CreateEvent(w.ns, "ev", start, start.Add(time.Hour), false,
		map[string]map[string]int{"pooled": {"ubuntu": 10}}); err != nil {
		t.Fatal(err)
	}
	w.waitPoolReady(2)
	w.eventually(30*time.Second, "2 pool droplets at DigitalOcean", func() string {
		if ids := w.fakeDropletIDs(); len(ids) != 2 {
			return fmt.Sprintf("droplets %v", ids)
		}
		return ""
	})
	before, creates := w.fakeDropletIDs(), w.do.RouteRequests(fakedo.RouteCreateDroplets)

	end := start.Add(3 * time.Hour)
	if err := w.hf.EditEventTimes(w.ns, "ev", start, end); err != nil {
		t.Fatal(err)
	}
	w.eventually(30*time.Second, "the edited event provisioned again", func() string {
		e, err := w.hf.Events.Get(w.ns, "ev", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if e.Spec.EndTime != gargantuasim.EventTime(end) || !e.Status.Provisioned || !e.Status.Ready {
			return fmt.Sprintf("end %s, status %+v", e.Spec.EndTime, e.Status)
		}
		return ""
	})
	// Longer than a pass that drained would take to show.
	w.holds(10*time.Second, "the pool after the edit", func() string {
		ids, nowCreates := w.fakeDropletIDs(), w.do.RouteRequests(fakedo.RouteCreateDroplets)
		if !slices.Equal(ids, before) || nowCreates != creates {
			return fmt.Sprintf("droplets %v (before %v), %d creates (before %d)", ids, before, nowCreates, creates)
		}
		return ""
	})
}

// TestWarmPoolHoldsNoMoreThanItsEventsSeats: an event with 3 seats keeps
// no more than 3 of warm_pool 5; each VM of the event takes a seat, and
// once all are taken the pool holds none. The last VMs still take the
// pool's droplets: an arriving VM's seat is not counted before its claim,
// which would drain the member it is taking.
func TestWarmPoolHoldsNoMoreThanItsEventsSeats(t *testing.T) {
	w, env := poolWorld(t, worldOptions{}, 5, false)
	g := w.gargantua(gargantuasim.V3_3)
	g.SessionEvent = "ev"
	if _, err := w.hf.StartEvent(w.ns, "ev", map[string]map[string]int{"pooled": {"ubuntu": 3}}); err != nil {
		t.Fatal(err)
	}
	w.waitPoolReady(3)
	w.holds(5*time.Second, "3 seats", func() string {
		if n := len(w.poolMembers()); n > 3 {
			return fmt.Sprintf("%d pool members", n)
		}
		return w.poolStatus(func(s v1alpha1.WarmPoolStatus) bool { return s.Wanted == 3 })
	})

	var vms []string
	session, err := g.StartSession("alice", env, "ubuntu")
	if err != nil {
		t.Fatal(err)
	}
	vms = append(vms, session.VMs...)
	w.eventually(90*time.Second, "2 seats left: 2 members", func() string {
		if why := w.poolStatus(func(s v1alpha1.WarmPoolStatus) bool { return s.Wanted == 2 && s.Ready == 2 && s.Claims == 1 }); why != "" {
			return why
		}
		if n := len(w.liveMembers()); n != 2 {
			return fmt.Sprintf("%d live members", n)
		}
		return ""
	})

	for _, user := range []string{"bob", "carol"} {
		session, err := g.StartSession(user, env, "ubuntu")
		if err != nil {
			t.Fatal(err)
		}
		vms = append(vms, session.VMs...)
	}
	w.eventually(90*time.Second, "every seat taken: no pool droplet", func() string {
		if why := w.poolStatus(func(s v1alpha1.WarmPoolStatus) bool {
			return s.Wanted == 0 && s.Ready == 0 && s.Booting == 0 && strings.Contains(s.Message, "seats of event ev are taken")
		}); why != "" {
			return why
		}
		if m := w.poolMembers(); len(m) != 0 {
			return fmt.Sprintf("pool members %v", slices.Collect(maps.Keys(m)))
		}
		if d, _ := w.fakeCounts(); d != 3 {
			return fmt.Sprintf("DigitalOcean holds %d droplets, want the 3 VMs'", d)
		}
		return ""
	})
	for _, vm := range vms {
		if d := w.droplet(vm); d.Spec.ClaimedDropletID == 0 {
			t.Errorf("VM %s created a droplet: the pool's were drained before its claim", vm)
		}
	}
}
