package bench

import (
	"context"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
)

// keyBound is how long, simulated, the benchmark waits after an event's
// end for the deleted VMs' SSH keys to go: they wait for the droplets'
// deletes to pause (--key-delete-delay), then go at the lowest priority.
const keyBound = 30 * time.Minute

// keyRoutes are the requests about SSH keys.
var keyRoutes = []string{fakedo.RouteDeleteKey, fakedo.RouteListKeys, fakedo.RouteGetKey}

// waitKeys waits, after the event end's window, until DigitalOcean holds
// no VM's SSH key, and records how long that took and the key requests
// meanwhile. The baseline does not wait: it stands for controllers whose
// keys go with their VM.
func (s *scenario) waitKeys(ctx context.Context) error {
	e := &s.res.EventEnd
	e.KeysSeconds = Num(nan)
	if s.mode != ModeOurs {
		return nil
	}
	var err error
	e.KeysSeconds, e.KeyRequests, err = s.countDownAfterEnd(ctx, afterEnd{what: "VM keys", bound: keyBound, routes: keyRoutes,
		left: &e.KeysLeft, count: func() int { return vmKeys(s.do.Keys(s.token), s.sharedKeyName()) }})
	if err != nil {
		return err
	}
	s.logf("keys after the event end: %d at the end, %d left after %s s (simulated), %d key requests",
		e.KeysAtEnd, e.KeysLeft, formatValue("%.0f", float64(e.KeysSeconds)), e.KeyRequests)
	return nil
}

// afterEnd is what the controller still does after the event end's
// window: what is counted down, within what bound, by which requests.
type afterEnd struct {
	what   string // what count counts, for the note when it is not done
	bound  time.Duration
	routes []string
	left   *int
	count  func() int
}

// countDownAfterEnd polls a.count into *a.left until it is 0 or a.bound
// (simulated) has passed since the event end's window closed, and returns
// how long, simulated, it took (NaN: not done) and the requests of
// a.routes from the event end's first delete on (those inside the window
// are not the event end's: eventEndRequests).
func (s *scenario) countDownAfterEnd(ctx context.Context, a afterEnd) (Num, int, error) {
	deadline := s.ended.Add(s.tl.current().toReal(a.bound))
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for *a.left > 0 && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return Num(nan), 0, ctx.Err()
		case <-tick.C:
		}
		if err := s.ctrl.exited(); err != nil {
			return Num(nan), 0, err
		}
		*a.left = a.count()
	}
	now := time.Now()
	took := Num(s.tl.sim(s.ended, now))
	if *a.left > 0 {
		took = Num(nan)
		s.note("%d %s still in DigitalOcean %v (simulated) after the event end", *a.left, a.what, a.bound)
	}
	return took, routesIn(s.do.Requests(), a.routes, s.endBegan, now), nil
}

// routesIn counts the records of the given routes that arrived in [from, to).
func routesIn(records []fakedo.RequestRecord, routes []string, from, to time.Time) int {
	c := requestsIn(records, "", from, to)
	n := 0
	for _, r := range routes {
		n += c.byEndpoint[r]
	}
	return n
}
