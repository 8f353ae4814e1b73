package digitalocean

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RateLimit is one of DigitalOcean's per-token limits: at most Requests in
// any Window.
type RateLimit struct {
	Requests int
	Window   time.Duration
}

func (l RateLimit) String() string { return fmt.Sprintf("%d/%v", l.Requests, l.Window) }

// DefaultRateLimits are DigitalOcean's documented per-token limits.
var DefaultRateLimits = []RateLimit{{Requests: 250, Window: time.Minute}, {Requests: 5000, Window: time.Hour}}

// DefaultHeadroom is the share of each limit left unused: for the token's
// other users (doctl, the console) and for requests DigitalOcean sees that
// the limiter does not (Go's transport silently resends an idempotent GET
// whose reused connection dropped).
const DefaultHeadroom = 0.1

// ParseRateLimits reads "250/1m,5000/1h".
func ParseRateLimits(s string) ([]RateLimit, error) {
	var out []RateLimit
	for _, part := range strings.Split(s, ",") {
		n, w, ok := strings.Cut(strings.TrimSpace(part), "/")
		requests, err := strconv.Atoi(n)
		window, werr := time.ParseDuration(w)
		if !ok || err != nil || werr != nil || requests <= 0 || window <= 0 {
			return nil, fmt.Errorf("%q is not requests/window, e.g. 250/1m", part)
		}
		out = append(out, RateLimit{Requests: requests, Window: window})
	}
	return out, nil
}

// LimiterOptions configure the per-token client-side rate limiter.
type LimiterOptions struct {
	// Limits are DigitalOcean's limits; DefaultRateLimits when empty.
	Limits []RateLimit
	// Headroom is the share of each limit never used; DefaultHeadroom when zero.
	Headroom float64
	// Disabled sends every request at once and never holds one back, not
	// even after a 429: how controllers without a limiter behave.
	Disabled bool
}

// Priority orders requests when a token's budget runs short.
type Priority int

const (
	// PriorityDelete is for deleting, and the lookups a delete needs:
	// a droplet left running costs money.
	PriorityDelete Priority = iota
	// PriorityCreate is for creating droplets and keys.
	PriorityCreate
	// PriorityPool is for refilling a warm pool: below a real VM's create,
	// which a user waits for, above re-reading what exists.
	PriorityPool
	// PriorityResync is for re-reading what exists.
	PriorityResync
	// PriorityCatalog is for reading DigitalOcean's catalog (regions,
	// sizes, images) and checking a token: never worth delaying the others.
	PriorityCatalog
	// PriorityTidy is for deleting what nothing needs any more and costs
	// nothing while it stays (a key whose droplet exists): it waits for
	// every other request.
	PriorityTidy
)

func (p Priority) String() string {
	return [...]string{"delete", "create", "pool", "resync", "catalog", "tidy"}[p]
}

// usableShare is the part of a window's budget each priority may fill: the
// rest is kept for the priorities before it, so a flood of creates (or of
// resyncs) can never take the slots a delete needs.
var usableShare = [...]float64{PriorityDelete: 1, PriorityCreate: 0.85, PriorityPool: 0.8, PriorityResync: 0.7, PriorityCatalog: 0.5, PriorityTidy: 0.4}

type priorityKey struct{}

// WithPriority marks the DigitalOcean calls made with ctx.
func WithPriority(ctx context.Context, p Priority) context.Context {
	return context.WithValue(ctx, priorityKey{}, p)
}

// raisePriority marks ctx one priority above its own (a GET's is resync).
func raisePriority(ctx context.Context) context.Context {
	p, ok := ctx.Value(priorityKey{}).(Priority)
	if !ok {
		p = PriorityResync
	}
	up := max(PriorityDelete, p-1)
	if up == PriorityPool {
		// A resync's pages are not a pool refill: keep them where they were.
		up = PriorityCreate
	}
	return WithPriority(ctx, up)
}

// priorityOf is the request's marked priority, else one guessed from its method.
func priorityOf(req *http.Request) Priority {
	if p, ok := req.Context().Value(priorityKey{}).(Priority); ok {
		return p
	}
	switch req.Method {
	case http.MethodDelete:
		return PriorityDelete
	case http.MethodPost, http.MethodPut:
		return PriorityCreate
	}
	return PriorityResync
}

// limiter keeps one token's requests inside DigitalOcean's limits. Each
// limit is a sliding log, as DigitalOcean's own: a request may go when the
// requests sent in the trailing window leave room for its priority. A
// request counts from when its answer arrived (by then DigitalOcean has
// certainly counted it) and, while in flight, counts without expiring.
// It never waits: a request without room is refused at once with how long
// until room frees, and the handler re-queues its object for then.
type limiter struct {
	mu          sync.Mutex
	windows     []*limitWindow
	pausedUntil time.Time
}

type limitWindow struct {
	RateLimit
	budget int          // Requests less the headroom
	sent   []*sentEntry // unordered
	// expiresAt is when the first finished entry of sent leaves the window
	// (zero: none had finished at the last prune). Until then prune has
	// nothing to do: with an hour's window sent holds thousands of entries,
	// and every request, held back or not, prunes.
	expiresAt time.Time
	// seenElsewhere is what DigitalOcean's headers say the token spent
	// beyond the requests in sent (other users of the token, or a previous
	// run of this controller), until seenUntil.
	seenElsewhere int
	seenUntil     time.Time
}

type sentEntry struct {
	done time.Time // zero while in flight
}

func newLimiter(o LimiterOptions) *limiter {
	limits := o.Limits
	if len(limits) == 0 {
		limits = DefaultRateLimits
	}
	headroom := o.Headroom
	if headroom <= 0 || headroom >= 1 {
		headroom = DefaultHeadroom
	}
	l := &limiter{}
	for _, r := range limits {
		if r.Requests > 0 && r.Window > 0 {
			budget := max(1, int(math.Round(float64(r.Requests)*(1-headroom))))
			l.windows = append(l.windows, &limitWindow{RateLimit: r, budget: budget})
		}
	}
	return l
}

// reserve takes a slot for a request of priority p, or says how long until
// one may free. finish records when the request's answer (or error) came.
func (l *limiter) reserve(p Priority, now time.Time) (finish func(time.Time), wait time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if wait := l.untilRoom(p, now); wait > 0 {
		return nil, wait
	}
	e := &sentEntry{}
	for _, w := range l.windows {
		w.sent = append(w.sent, e)
	}
	return func(done time.Time) {
		l.mu.Lock()
		e.done = done
		l.mu.Unlock()
	}, 0
}

// room is how long until a request of priority p would be sent (0: now),
// without taking the slot.
func (l *limiter) room(p Priority, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.untilRoom(p, now)
}

// load is the largest share of a window's budget in use.
func (l *limiter) load(now time.Time) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	most := 0.0
	for _, w := range l.windows {
		w.prune(now)
		most = max(most, float64(w.used(now))/float64(w.budget))
	}
	return most
}

// untilRoom is room with l.mu held.
func (l *limiter) untilRoom(p Priority, now time.Time) time.Duration {
	if d := l.pausedUntil.Sub(now); d > 0 {
		return d
	}
	wait := time.Duration(0)
	for _, w := range l.windows {
		w.prune(now)
		if w.used(now) >= w.allowed(p) {
			wait = max(wait, w.nextFree(now))
		}
	}
	return wait
}

// pause refuses every request until now+d: after DigitalOcean's 429, each
// further request would be refused too and still count against the window.
func (l *limiter) pause(now time.Time, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if until := now.Add(d); until.After(l.pausedUntil) {
		l.pausedUntil = until
	}
}

// observe stays in step with DigitalOcean's count for the limit its
// headers describe (ratelimit-limit; the hourly one): requests it counted
// that this limiter did not send fill the window until ratelimit-reset.
func (l *limiter) observe(now time.Time, h http.Header) {
	limit, err1 := strconv.Atoi(h.Get("ratelimit-limit"))
	remaining, err2 := strconv.Atoi(h.Get("ratelimit-remaining"))
	if err1 != nil || err2 != nil || limit <= 0 {
		return
	}
	until := now
	if reset, err := strconv.ParseInt(h.Get("ratelimit-reset"), 10, 64); err == nil {
		until = time.Unix(reset, 0)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.windowFor(limit)
	if w == nil {
		return
	}
	w.prune(now)
	counted := limit - remaining
	w.seenElsewhere = max(0, counted-len(w.sent))
	w.seenUntil = until
	if w.seenUntil.After(now.Add(w.Window)) {
		w.seenUntil = now.Add(w.Window)
	}
}

// windowFor is the window with DigitalOcean's reported limit, else the longest.
func (l *limiter) windowFor(limit int) *limitWindow {
	var longest *limitWindow
	for _, w := range l.windows {
		if w.Requests == limit {
			return w
		}
		if longest == nil || w.Window > longest.Window {
			longest = w
		}
	}
	return longest
}

func (w *limitWindow) allowed(p Priority) int {
	return max(1, int(math.Round(float64(w.budget)*usableShare[p])))
}

func (w *limitWindow) used(now time.Time) int {
	n := len(w.sent)
	if now.Before(w.seenUntil) {
		n += w.seenElsewhere
	}
	return n
}

func (w *limitWindow) prune(now time.Time) {
	if now.Before(w.expiresAt) {
		// Entries that finish later expire later than expiresAt too.
		return
	}
	kept := w.sent[:0]
	w.expiresAt = time.Time{}
	for _, e := range w.sent {
		if e.done.IsZero() {
			kept = append(kept, e)
			continue
		}
		if expires := e.done.Add(w.Window); now.Before(expires) {
			kept = append(kept, e)
			if w.expiresAt.IsZero() || expires.Before(w.expiresAt) {
				w.expiresAt = expires
			}
		}
	}
	clear(w.sent[len(kept):])
	w.sent = kept
}

// nextFree is how long until the oldest finished request leaves the window
// (or what DigitalOcean counted elsewhere expires, if sooner). It follows a
// prune at now.
func (w *limitWindow) nextFree(now time.Time) time.Duration {
	wait := time.Duration(0)
	if !w.expiresAt.IsZero() {
		wait = w.expiresAt.Sub(now)
	}
	if d := w.seenUntil.Sub(now); d > 0 && w.seenElsewhere > 0 && (wait == 0 || d < wait) {
		wait = d
	}
	if wait <= 0 {
		// Every slot is in flight: look again shortly.
		wait = 100 * time.Millisecond
	}
	return wait
}
