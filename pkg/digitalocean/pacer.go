package digitalocean

import (
	"sync"
	"time"
)

// RateLimit is one of DigitalOcean's per-token limits: at most Requests in
// any Window.
type RateLimit struct {
	Requests int
	Window   time.Duration
}

// RateLimits are the per-token limits the clients pace themselves to: 10%
// under DigitalOcean's documented 250 per minute and 5,000 per hour. The
// margin is for the token's other users (doctl, the console) and for the
// requests DigitalOcean sees that the pacer does not: Go's HTTP transport
// silently resends an idempotent GET whose reused connection was dropped.
// Without pacing, 50 booting droplets polled every 5 s alone make 600
// requests a minute. NewClients reads it; tests against a fake with scaled
// limits set it first.
var RateLimits = []RateLimit{{Requests: 225, Window: time.Minute}, {Requests: 4500, Window: time.Hour}}

// maxPaceWait is the longest a request waits in the transport for a free
// slot; a longer wait is answered with a local 429 so the worker is freed
// and the handler re-queues the object after the wait.
const maxPaceWait = time.Second

// pacer is a sliding log per limit, like DigitalOcean's: a request may go
// when fewer than Requests were sent in the trailing Window. A request
// counts from when its answer arrived (by then DigitalOcean has certainly
// counted it), and while in flight it counts without expiring.
type pacer struct {
	mu      sync.Mutex
	windows []*paceWindow
}

type paceWindow struct {
	RateLimit
	sent []*paceEntry // unordered
}

type paceEntry struct {
	done time.Time // zero while in flight
}

func newPacer(limits []RateLimit) *pacer {
	p := &pacer{}
	for _, l := range limits {
		if l.Requests > 0 && l.Window > 0 {
			p.windows = append(p.windows, &paceWindow{RateLimit: l})
		}
	}
	return p
}

// reserve takes a slot in every window, or says how long until one frees.
// The returned func records when the request's answer (or error) arrived.
func (p *pacer) reserve(now time.Time) (finish func(time.Time), wait time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range p.windows {
		w.prune(now)
		if len(w.sent) >= w.Requests {
			wait = max(wait, w.nextFree(now))
		}
	}
	if wait > 0 {
		return nil, wait
	}
	e := &paceEntry{}
	for _, w := range p.windows {
		w.sent = append(w.sent, e)
	}
	return func(done time.Time) {
		p.mu.Lock()
		e.done = done
		p.mu.Unlock()
	}, 0
}

func (w *paceWindow) prune(now time.Time) {
	kept := w.sent[:0]
	for _, e := range w.sent {
		if e.done.IsZero() || now.Before(e.done.Add(w.Window)) {
			kept = append(kept, e)
		}
	}
	clear(w.sent[len(kept):])
	w.sent = kept
}

// nextFree is how long until the oldest finished request leaves the window.
func (w *paceWindow) nextFree(now time.Time) time.Duration {
	wait := time.Duration(0)
	for _, e := range w.sent {
		if e.done.IsZero() {
			continue
		}
		if d := e.done.Add(w.Window).Sub(now); wait == 0 || d < wait {
			wait = d
		}
	}
	if wait <= 0 {
		// Every slot is in flight: look again shortly.
		wait = 100 * time.Millisecond
	}
	return wait
}
