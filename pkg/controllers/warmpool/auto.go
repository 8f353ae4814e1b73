package warmpool

import (
	"math"
	"slices"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
)

// arrivalWindow is how far back an auto-sized pool counts arrivals. The
// rate comes from the VMs' creation timestamps, not from memory, so a
// restarted controller sizes the pool as the one before it did; an EWMA
// would start from nothing after each restart. Five minutes holds enough
// arrivals of a class to be steady and forgets a finished burst soon.
const arrivalWindow = 5 * time.Minute

// minArrivalSpan is the shortest time the arrivals are spread over: the
// window starts at the oldest arrival in it, so the rate follows a burst's
// start at once, but three VMs within a second are not 180 a minute.
const minArrivalSpan = time.Minute

// autoConfidence is how likely the pool holds enough for the arrivals
// within one refill: the pool is sized at this quantile of a Poisson
// distribution of mean rate × refill time. At 95% a workshop's lulls left
// one droplet, and the first arrivals after a break waited a boot; 99%
// keeps two or three through a lull, which costs little next to a fixed
// pool and serves the burst that ends it.
const autoConfidence = 0.99

// DefaultSurplusIdle is how long a ready member beyond an auto-sized
// pool's size waits unclaimed before it is deleted: a lull between two
// bursts keeps its booted droplets.
const DefaultSurplusIdle = 5 * time.Minute

// Basis of an auto-sized pool's size (status.auto.basis).
const (
	BasisStart    = "start"
	BasisArrivals = "arrivals"
	BasisMax      = "max"
	BasisFloor    = "floor"
)

// arrivalRate is the arrivals per minute among created, over the span from
// the oldest one within arrivalWindow to now (at least minArrivalSpan),
// and how many arrived within the window.
func arrivalRate(created []time.Time, now time.Time) (float64, int) {
	n := 0
	oldest := now
	for _, c := range created {
		if c.After(now.Add(-arrivalWindow)) && !c.After(now) {
			n++
			if c.Before(oldest) {
				oldest = c
			}
		}
	}
	if n == 0 {
		return 0, 0
	}
	span := min(max(now.Sub(oldest), minArrivalSpan), arrivalWindow)
	return float64(n) / span.Minutes(), n
}

// poissonQuantile is the smallest k with P(X ≤ k) ≥ q for X of a Poisson
// distribution of the given mean, or limit when that is above limit.
func poissonQuantile(mean, q float64, limit int) int {
	p := math.Exp(-mean) // P(X = 0); 0 past a mean of 745, when limit is the answer anyway
	cdf := p
	for k := 0; k < limit; k++ {
		if cdf >= q {
			return k
		}
		p *= mean / float64(k+1)
		cdf += p
	}
	return limit
}

// autoSize sizes a pool of at most maxSize from the creation times of its
// template's VMs (live: how many of them are not going away) and its
// refill time. Before any arrival, and with no VM of the template left,
// nothing is known and the next arrivals may be a class starting at once:
// the pool holds maxSize. Otherwise it holds what arrives within one
// refill at autoConfidence, and at least one, so the first arrival after a
// lull starts at once.
func autoSize(maxSize int, created []time.Time, live int, refill time.Duration, now time.Time) *v1alpha1.WarmPoolAutoStatus {
	if maxSize < 1 {
		maxSize = config.DefaultWarmPoolMax
	}
	rate, n := arrivalRate(created, now)
	s := &v1alpha1.WarmPoolAutoStatus{ArrivalsPerMinute: math.Round(rate*10) / 10,
		RefillSeconds: int(refill.Round(time.Second).Seconds())}
	switch k := poissonQuantile(rate*refill.Minutes(), autoConfidence, maxSize); {
	case n == 0 && live == 0:
		s.Size, s.Basis = maxSize, BasisStart
	case k >= maxSize:
		s.Size, s.Basis = maxSize, BasisMax
	case k < 1:
		s.Size, s.Basis = 1, BasisFloor
	default:
		s.Size, s.Basis = k, BasisArrivals
	}
	return s
}

// size is the pool's size before the event's and capacity's caps: its
// configured size, or for an auto-sized pool the size autoSize chooses
// from vms (the pool's Environment and template's, going away or not),
// with how it was chosen.
func (h *handler) size(pool *v1alpha1.WarmPool, members []*v1alpha1.Droplet, vms []*hfv1.VirtualMachine, now time.Time) (int, *v1alpha1.WarmPoolAutoStatus) {
	if !pool.Spec.Auto {
		return pool.Spec.WarmPool, nil
	}
	created := make([]time.Time, 0, len(vms))
	for _, vm := range vms {
		created = append(created, vm.CreationTimestamp.Time)
	}
	s := autoSize(pool.Spec.Max, created, len(liveVMs(vms)), h.refillTime(pool, members), now)
	return s.Size, s
}

// toDrainAt is toDrain, but an auto-sized pool whose target is its own
// size (see handler.size) shrinks by not refilling: a current member beyond
// it is deleted only once it has been ready and unclaimed for idle, the
// longest idle first, and booting ones finish first. A target below the
// size is a cap (the event's end, its seats, count_capacity), which holds
// at once as for a fixed pool. It also returns when the next member that
// waits is due (0 for none).
func toDrainAt(pool *v1alpha1.WarmPool, members []*v1alpha1.Droplet, wanted, size int, now time.Time, idle time.Duration) ([]*v1alpha1.Droplet, time.Duration) {
	if !pool.Spec.Auto || wanted == 0 || wanted < size {
		return toDrain(pool, members, wanted), 0
	}
	// Wanted as large as the members: only those of an older request.
	stale := toDrain(pool, members, len(members))
	var fresh []*v1alpha1.Droplet
	for _, d := range members {
		if current(pool, d) {
			fresh = append(fresh, d)
		}
	}
	extra := len(fresh) - wanted
	if extra <= 0 {
		return stale, 0
	}
	var idleReady []*v1alpha1.Droplet
	for _, d := range fresh {
		if ready(d) {
			idleReady = append(idleReady, d)
		}
	}
	slices.SortStableFunc(idleReady, func(a, b *v1alpha1.Droplet) int { return readySince(a).Compare(readySince(b)) })
	for _, d := range idleReady[:min(extra, len(idleReady))] {
		if due := readySince(d).Add(idle).Sub(now); due > 0 {
			return stale, due
		}
		stale = append(stale, d)
	}
	return stale, 0
}

// readySince is when the member became claimable, or its creation when
// that is not recorded.
func readySince(d *v1alpha1.Droplet) time.Time {
	if at, err := time.Parse(time.RFC3339, reachableSince(d)); err == nil {
		return at
	}
	return d.CreationTimestamp.Time
}
