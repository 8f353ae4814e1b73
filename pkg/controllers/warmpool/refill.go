package warmpool

import (
	"slices"
	"sync"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
)

// defaultRefill is the refill time assumed before a pool has seen one of
// its members become claimable: a DigitalOcean boot plus the SSH check,
// erring long, since a pool that starts early costs minutes of droplet
// time while one that starts late makes a workshop's first users wait.
const defaultRefill = 2 * time.Minute

// refillSamples is how many recent refills a pool's estimate is taken from:
// enough to smooth one slow boot out, few enough to follow DigitalOcean
// when its boots get slower or faster.
const refillSamples = 20

// refills learns, per pool, how long a member takes from its creation to
// claimable (ready and reachable).
type refills struct {
	mu     sync.Mutex
	byPool map[types.UID]*refillLog
}

type refillLog struct {
	recent []time.Duration
	// noted holds the members already counted, so each counts once.
	noted map[types.UID]bool
}

// note records the refill of each claimable member not counted yet.
func (r *refills) note(pool types.UID, members []*v1alpha1.Droplet) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byPool == nil {
		r.byPool = map[types.UID]*refillLog{}
	}
	l := r.byPool[pool]
	if l == nil {
		l = &refillLog{noted: map[types.UID]bool{}}
		r.byPool[pool] = l
	}
	for _, d := range members {
		took, ok := refillOf(d)
		if !ok || l.noted[d.UID] {
			continue
		}
		l.noted[d.UID] = true
		l.recent = append(l.recent, took)
		if len(l.recent) > refillSamples {
			l.recent = l.recent[1:]
		}
	}
	// Forget members gone from the pool: their refill is counted.
	present := map[types.UID]bool{}
	for _, d := range members {
		present[d.UID] = true
	}
	for uid := range l.noted {
		if !present[uid] {
			delete(l.noted, uid)
		}
	}
}

// estimate is the pool's refill time: the 90th percentile of its recent
// refills (the longest while there are ten or fewer), or defaultRefill.
func (r *refills) estimate(pool types.UID) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.byPool[pool]
	if l == nil || len(l.recent) == 0 {
		return defaultRefill
	}
	sorted := slices.Sorted(slices.Values(l.recent))
	return sorted[min(len(sorted)-1, len(sorted)*9/10)]
}

func (r *refills) forget(pool types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byPool, pool)
}

// refillOf is the time from a member's creation to the moment it became
// reachable, for a member that is claimable now.
func refillOf(d *v1alpha1.Droplet) (time.Duration, bool) {
	if !ready(d) {
		return 0, false
	}
	at, err := time.Parse(time.RFC3339, reachableSince(d))
	if err != nil {
		return 0, false
	}
	took := at.Sub(d.CreationTimestamp.Time)
	return took, took > 0
}

func reachableSince(d *v1alpha1.Droplet) string {
	for _, c := range d.Status.Conditions {
		if c.Type == string(v1alpha1.Reachable) {
			return c.LastTransitionTime
		}
	}
	return ""
}

// refillTime is the pool's learned refill time, after counting the
// members that became claimable since the last pass.
func (h *handler) refillTime(pool *v1alpha1.WarmPool, members []*v1alpha1.Droplet) time.Duration {
	h.refills.note(pool.UID, members)
	return h.refills.estimate(pool.UID)
}
