package bench

import (
	"context"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean/fake"
)

// keyBound is how long, simulated, the benchmark waits after an event's
// end for the deleted VMs' SSH keys to go: they wait for the droplets'
// deletes to pause (--key-delete-delay), then go at the lowest priority.
const keyBound = 30 * time.Minute

// keyRoutes are the requests about SSH keys.
var keyRoutes = []string{fake.RouteDeleteKey, fake.RouteListKeys, fake.RouteGetKey}

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
	if err := s.countDownAfterEnd(ctx, keyBound, &e.KeysLeft, func() int { return vmKeys(s.do.Keys(s.token), s.sharedKeyName()) }); err != nil {
		return err
	}
	now := time.Now()
	if e.KeysLeft == 0 {
		e.KeysSeconds = Num(s.tl.sim(s.ended, now))
	} else {
		s.note("%d VM keys still in DigitalOcean %v (simulated) after the event end", e.KeysLeft, keyBound)
	}
	e.KeyRequests = routesIn(s.do.Requests(), keyRoutes, s.ended, now)
	s.logf("keys after the event end: %d at the end, %d left after %.0f s (simulated), %d key requests",
		e.KeysAtEnd, e.KeysLeft, s.tl.sim(s.ended, now), e.KeyRequests)
	return nil
}

// countDownAfterEnd polls count into *left until it is 0 or bound
// (simulated) has passed since the event end's window closed.
func (s *scenario) countDownAfterEnd(ctx context.Context, bound time.Duration, left *int, count func() int) error {
	deadline := s.ended.Add(s.tl.current().toReal(bound))
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for *left > 0 && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if err := s.ctrl.exited(); err != nil {
			return err
		}
		*left = count()
	}
	return nil
}

// routesIn counts the records of the given routes that arrived in [from, to).
func routesIn(records []fake.RequestRecord, routes []string, from, to time.Time) int {
	c := requestsIn(records, "", from, to)
	n := 0
	for _, r := range routes {
		n += c.byEndpoint[r]
	}
	return n
}
