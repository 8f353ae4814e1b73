package warmpool

import (
	"math"
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
)

// every is n creation times, one each interval, the last at end.
func every(n int, interval time.Duration, end time.Time) []time.Time {
	out := make([]time.Time, n)
	for i := range out {
		out[i] = end.Add(-time.Duration(n-1-i) * interval)
	}
	return out
}

func TestArrivalRate(t *testing.T) {
	for _, c := range []struct {
		name    string
		created []time.Time
		rate    float64
		n       int
	}{
		{"none", nil, 0, 0},
		// A steady stream filling the window: 30 over 5 minutes.
		{"steady", every(40, 10*time.Second, epoch), 30.0 / (290.0 / 60), 30},
		// A burst's start: 10 within 30 s count over a minute, not five.
		{"burst", every(10, 3*time.Second, epoch), 10, 10},
		// Older arrivals and ones in the future do not count.
		{"outside", []time.Time{epoch.Add(-arrivalWindow - time.Second), epoch.Add(time.Minute), epoch.Add(-2 * time.Minute)}, 0.5, 1},
	} {
		rate, n := arrivalRate(c.created, epoch)
		if n != c.n || math.Abs(rate-c.rate) > 1e-9 {
			t.Errorf("%s: %v a minute from %d, want %v from %d", c.name, rate, n, c.rate, c.n)
		}
	}
}

func TestPoissonQuantile(t *testing.T) {
	for _, c := range []struct {
		mean float64
		q    float64
		want int
	}{
		{0, 0.95, 0},
		{0.05, 0.95, 0},   // P(0) = 0.951
		{0.06, 0.95, 1},   // P(0) = 0.942
		{2, 0.95, 5},      // P(≤4) = 0.947, P(≤5) = 0.983
		{11, 0.95, 17},    // P(≤16) = 0.944, P(≤17) = 0.968
		{11, 0.99, 19},    // P(≤18) = 0.982, P(≤19) = 0.991
		{1000, 0.95, 100}, // beyond the limit (e^-1000 is 0 in float64)
	} {
		if got := poissonQuantile(c.mean, c.q, 100); got != c.want {
			t.Errorf("quantile %v of Poisson(%v) = %d, want %d", c.q, c.mean, got, c.want)
		}
	}
	if got := poissonQuantile(11, 0.95, 12); got != 12 {
		t.Errorf("limited to 12: %d", got)
	}
}

func TestAutoSize(t *testing.T) {
	refill := 33 * time.Second
	for _, c := range []struct {
		name    string
		max     int
		created []time.Time
		live    int
		refill  time.Duration
		want    v1alpha1.WarmPoolAutoStatus
	}{
		{name: "start holds max", max: 20, refill: refill,
			want: v1alpha1.WarmPoolAutoStatus{Size: 20, Basis: BasisStart, RefillSeconds: 33}},
		{name: "unset max is the default", refill: refill,
			want: v1alpha1.WarmPoolAutoStatus{Size: 20, Basis: BasisStart, RefillSeconds: 33}},
		// One every 3 s for 3 minutes, a 33 s refill: λR = 11.2, 99% at 20.
		{name: "class", max: 25, created: every(60, 3*time.Second, epoch), live: 60, refill: refill,
			want: v1alpha1.WarmPoolAutoStatus{Size: 20, Basis: BasisArrivals, ArrivalsPerMinute: 20.3, RefillSeconds: 33}},
		{name: "class capped", max: 10, created: every(60, 3*time.Second, epoch), live: 60, refill: refill,
			want: v1alpha1.WarmPoolAutoStatus{Size: 10, Basis: BasisMax, ArrivalsPerMinute: 20.3, RefillSeconds: 33}},
		// VMs running, none arrived lately: keep one, not max.
		{name: "lull", max: 20, created: every(5, time.Second, epoch.Add(-time.Hour)), live: 5, refill: refill,
			want: v1alpha1.WarmPoolAutoStatus{Size: 1, Basis: BasisFloor, RefillSeconds: 33}},
		// Every VM gone and the window empty: the next class may come.
		{name: "all gone", max: 20, created: every(5, time.Second, epoch.Add(-time.Hour)), refill: refill,
			want: v1alpha1.WarmPoolAutoStatus{Size: 20, Basis: BasisStart, RefillSeconds: 33}},
		// A slower refill needs more: λ = 2.2/min, R = 2 min, λR = 4.4, 99% at 10.
		{name: "slow refill", max: 20, created: every(10, 30*time.Second, epoch), live: 10, refill: 2 * time.Minute,
			want: v1alpha1.WarmPoolAutoStatus{Size: 10, Basis: BasisArrivals, ArrivalsPerMinute: 2.2, RefillSeconds: 120}},
	} {
		got := autoSize(c.max, c.created, c.live, c.refill, epoch)
		if *got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, *got, c.want)
		}
	}
}

// readyFor is a current ready member that became claimable idle ago.
func readyFor(name string, idle time.Duration) *v1alpha1.Droplet {
	d := claimableAfter(name, epoch.Add(-idle-time.Minute), time.Minute)
	d.Spec.Pool = &v1alpha1.PoolMembership{Name: "p", RequestHash: "h"}
	return d
}

// TestAutoSurplusWaits: an auto-sized pool above its size deletes a ready
// member only once it has waited unclaimed for the idle time, the longest
// idle first, never a booting one; members of an older request, a target
// of 0 (the event over) and a target capped below the size drain at once,
// as for a fixed pool.
func TestAutoSurplusWaits(t *testing.T) {
	const idle = 5 * time.Minute
	auto := &v1alpha1.WarmPool{Spec: v1alpha1.WarmPoolSpec{Auto: true, Max: 10, RequestHash: "h"}}
	fixed := &v1alpha1.WarmPool{Spec: v1alpha1.WarmPoolSpec{WarmPool: 1, RequestHash: "h"}}
	members := []*v1alpha1.Droplet{
		readyFor("idle-6m", 6*time.Minute),
		readyFor("idle-1m", time.Minute),
		readyFor("idle-9m", 9*time.Minute),
		member("booting", "h", 0, false),
		member("booting-slow", "h", 10, false),
		member("old-request", "g", 20, true),
	}
	for _, c := range []struct {
		name         string
		pool         *v1alpha1.WarmPool
		wanted, size int
		want         []string
		due          time.Duration
	}{
		{"within size", auto, 5, 5, []string{"old-request"}, 0},
		{"one over", auto, 4, 4, []string{"old-request", "idle-9m"}, 0},
		{"two over", auto, 3, 3, []string{"old-request", "idle-9m", "idle-6m"}, 0},
		// The third is idle 1 minute: due in 4.
		{"three over", auto, 2, 2, []string{"old-request", "idle-9m", "idle-6m"}, 4 * time.Minute},
		// Booting ones are never surplus: they finish and wait their turn.
		{"four over", auto, 1, 1, []string{"old-request", "idle-9m", "idle-6m"}, 4 * time.Minute},
		{"event over", auto, 0, 1, []string{"old-request", "booting-slow", "booting", "idle-9m", "idle-6m", "idle-1m"}, 0},
		// Seats or count_capacity below the size: a cap, held at once.
		{"capped", auto, 1, 4, []string{"old-request", "booting-slow", "booting", "idle-9m", "idle-6m"}, 0},
		{"fixed drains at once", fixed, 1, 1, []string{"old-request", "booting-slow", "booting", "idle-9m", "idle-6m"}, 0},
	} {
		got, due := toDrainAt(c.pool, members, c.wanted, c.size, epoch, idle)
		if g := names(got); !equalNames(g, c.want) || due != c.due {
			t.Errorf("%s: drains %v, next due in %v; want %v and %v", c.name, g, due, c.want, c.due)
		}
	}
}

func equalNames(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestWantedChangedTellsStepsForAuto(t *testing.T) {
	for _, c := range []struct {
		auto          bool
		before, after int
		want          bool
	}{
		{false, 5, 6, true}, {false, 5, 5, false},
		{true, 5, 6, false}, {true, 7, 8, true}, {true, 1, 0, true}, {true, 0, 20, true}, {true, 2, 3, false},
	} {
		before, after := v1alpha1.WarmPoolStatus{Wanted: c.before, Message: "m"}, v1alpha1.WarmPoolStatus{Wanted: c.after, Message: "m"}
		if got := isNews(c.auto, before, after); got != c.want {
			t.Errorf("auto %v %d→%d: %v, want %v", c.auto, c.before, c.after, got, c.want)
		}
	}
}
