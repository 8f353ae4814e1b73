package environment

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"k8s.io/apimachinery/pkg/labels"
)

// ReasonDropletLimitShort: the droplets a token's account holds and the
// seats its events still need add up to more than its droplet limit.
const ReasonDropletLimitShort = "DropletLimitShort"

// HeadroomWindow is how far ahead the droplet limit check looks: events
// running now or starting within it count.
const HeadroomWindow = 24 * time.Hour

// seatCount is what one Environment's events still need of one token.
type seatCount struct {
	// seats are the droplets still to come, by event name.
	seats map[string]int
	// source says where the Environment reads the token, for the message.
	source string
}

func (s seatCount) total() int {
	n := 0
	for _, v := range s.seats {
		n += v
	}
	return n
}

// headroom adds up, per token (by hash), the seats every Environment's
// events still need: several Environments may share a token's account and
// its droplet limit.
type headroom struct {
	mu sync.Mutex
	// byToken holds each Environment's count (by namespace/name) per token.
	byToken map[string]map[string]seatCount
}

func newHeadroom() *headroom { return &headroom{byToken: map[string]map[string]seatCount{}} }

// record replaces env's counts (by token hash) and returns the other
// Environments that use a token whose total changed: their warnings must
// change too.
func (r *headroom) record(envKey string, counts map[string]seatCount) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	others := map[string]bool{}
	changed := func(byEnv map[string]seatCount) {
		for other := range byEnv {
			others[other] = true
		}
	}
	for hash, byEnv := range r.byToken {
		if _, uses := counts[hash]; uses {
			continue
		}
		if _, had := byEnv[envKey]; had {
			delete(byEnv, envKey)
			changed(byEnv)
		}
		if len(byEnv) == 0 {
			delete(r.byToken, hash)
		}
	}
	for hash, c := range counts {
		byEnv := r.byToken[hash]
		if byEnv == nil {
			byEnv = map[string]seatCount{}
			r.byToken[hash] = byEnv
		}
		if prev, had := byEnv[envKey]; !had || prev.total() != c.total() {
			changed(byEnv)
		}
		byEnv[envKey] = c
	}
	delete(others, envKey)
	return slices.Sorted(maps.Keys(others))
}

// demand is every Environment's count of token hash, by Environment.
func (r *headroom) demand(hash string) map[string]seatCount {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.byToken[hash])
}

// forget drops an Environment that is gone or no longer ours.
func (r *headroom) forget(envKey string) []string {
	return r.record(envKey, nil)
}

// seatsToCome counts, per template, the droplets env's events running or
// starting within HeadroomWindow still need: the VMs they ask for less
// those already holding a droplet (provisioned or running) and the warm
// pool's members (held already, they take seats without a new droplet).
// next is when the count changes by the clock alone (an event entering
// the window or ending).
func (h *handler) seatsToCome(env *hfv1.Environment, uses []eventUse, now time.Time) (byEvent map[string]map[string]int, next time.Time) {
	byEvent = map[string]map[string]int{}
	edge := func(t time.Time) {
		if t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	pooled := h.pooled(env)
	for _, u := range uses {
		if u.timed {
			edge(u.start.Add(-HeadroomWindow))
			edge(u.end)
			if now.Before(u.start.Add(-HeadroomWindow)) || !now.Before(u.end) {
				continue
			}
		}
		seats := u.count - h.holding(env, u.event, u.template) - pooled[u.template]
		if seats <= 0 {
			continue
		}
		if byEvent[u.template] == nil {
			byEvent[u.template] = map[string]int{}
		}
		byEvent[u.template][u.event] += seats
	}
	return byEvent, next
}

// holding counts the VMs of event in env of template that hold a droplet.
func (h *handler) holding(env *hfv1.Environment, event, template string) int {
	vms, err := h.vms.List(env.Namespace, labels.SelectorFromSet(labels.Set{v1alpha1.ScheduledEventLabel: event}))
	if err != nil {
		return 0
	}
	n := 0
	for _, vm := range vms {
		if vm.Spec.VirtualMachineTemplateId == template && vm.Status.EnvironmentId == env.Name &&
			(vm.Status.Status == hfv1.VmStatusProvisioned || vm.Status.Status == hfv1.VmStatusRunning) {
			n++
		}
	}
	return n
}

// pooled counts each template's warm pool members of env, ready or
// booting.
func (h *handler) pooled(env *hfv1.Environment) map[string]int {
	out := map[string]int{}
	pools, err := h.pools.List(env.Namespace, labels.Everything())
	if err != nil {
		return out
	}
	for _, p := range pools {
		if p.Spec.Environment == env.Name && p.DeletionTimestamp == nil {
			out[p.Spec.Template] += p.Status.Ready + p.Status.Booting
		}
	}
	return out
}

// limitProblem says, when held droplets and the seats to come of every
// Environment on the token exceed the account's droplet limit, which
// events need how many, and the fix. Advisory: DigitalOcean decides what
// it creates; nothing is refused here.
func limitProblem(envKey, hash string, demand map[string]seatCount, held, limit int) (Problem, bool) {
	own, ok := demand[envKey]
	if !ok || limit <= 0 {
		return Problem{}, false
	}
	seats := 0
	var events []string
	for _, envKey := range slices.Sorted(maps.Keys(demand)) {
		c := demand[envKey]
		for _, e := range slices.Sorted(maps.Keys(c.seats)) {
			seats += c.seats[e]
			events = append(events, fmt.Sprintf("%q of Environment %q (%d)", e, shortEnvName(envKey), c.seats[e]))
		}
	}
	short := held + seats - limit
	if seats == 0 || short <= 0 {
		return Problem{}, false
	}
	text := fmt.Sprintf("the scheduled events running or starting within %.0f h still need %d droplets (%s), and the token's account holds %d droplets of its droplet limit %d: %d short. "+
		"Ask DigitalOcean to raise the account's droplet limit (https://cloud.digitalocean.com/account/team/droplet_limit_increase), or give an event's Environment a token of another account",
		HeadroomWindow.Hours(), seats, strings.Join(events, ", "), held, limit, short)
	return Problem{Location: "the token from " + own.source, Reason: ReasonDropletLimitShort, Advisory: true, Text: text,
		// Once per shortfall: while an event's VMs are made, seats become
		// held droplets and the sum stays.
		id: fmt.Sprintf("%s/%s/%d/%d", ReasonDropletLimitShort, hash, limit, short)}, true
}

// shortEnvName is the name of a namespace/name key.
func shortEnvName(envKey string) string {
	_, name, _ := strings.Cut(envKey, "/")
	return name
}

// seatsByToken regroups seats (by template, then event) by the token
// (hash) each template's config reads.
func seatsByToken(seats map[string]map[string]int, byToken map[string][]templateCheck) map[string]seatCount {
	out := map[string]seatCount{}
	for token, checks := range byToken {
		c := seatCount{seats: map[string]int{}, source: checks[0].tokenSource}
		for _, check := range checks {
			for event, n := range seats[check.loc.vmt.Name] {
				c.seats[event] += n
			}
		}
		if c.total() > 0 {
			out[digitalocean.TokenHash(token)] = c
		}
	}
	return out
}

// checkDropletLimit warns when token's account cannot hold the droplets
// the events of every Environment on it still need (limitProblem). The
// droplet count is read with every check (a request per token at most
// every maxAge): it is also the metric an alert compares with the limit.
func (h *handler) checkDropletLimit(v *verdict, envKey, token string, maxAge time.Duration) {
	held, err := h.catalogs.DropletsHeld(h.ctx, token, maxAge)
	if err != nil {
		f := digitalocean.Classify(err)
		v.recheck = min(v.recheck, max(f.RetryAfter, time.Second))
		return
	}
	hash := digitalocean.TokenHash(token)
	if p, short := limitProblem(envKey, hash, h.headroom.demand(hash), held, h.catalogs.DropletLimit(token)); short {
		v.problems = append(v.problems, p)
	}
}
