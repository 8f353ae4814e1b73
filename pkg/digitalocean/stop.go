package digitalocean

// Stopping: a leader about to give up its Lease first stops sending to
// DigitalOcean and waits for what it sent. A new leader would not yet find
// a droplet whose create is still unanswered (DigitalOcean lists it only
// later) and would create a second one.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// inFlight counts the requests under way and the passes that sent them.
type inFlight struct {
	mu      sync.Mutex
	stopped bool
	n       int
	// idle is closed once n is zero after stop; it never opens again, as
	// nothing new is counted once stopped.
	idle chan struct{}
}

func newInFlight() *inFlight { return &inFlight{idle: make(chan struct{})} }

// enter admits a request about to be sent and returns its leave. Once
// stopped, the request is never sent: it is held until its caller gives up
// (its context ends), as a caller told at once would only try again.
func (f *inFlight) enter(ctx context.Context) (leave func(), err error) {
	f.mu.Lock()
	if f.stopped {
		f.mu.Unlock()
		<-ctx.Done()
		return nil, fmt.Errorf("not sent: DigitalOcean requests are stopped: %w", context.Cause(ctx))
	}
	if ctx.Err() != nil {
		// Its caller gave up already: a request sent now would be seen
		// through (see detach) for no one.
		f.mu.Unlock()
		return nil, context.Cause(ctx)
	}
	f.n++
	f.mu.Unlock()
	if c, ok := ctx.Value(callKey{}).(*call); ok {
		c.hold(f)
	}
	return f.leave, nil
}

func (f *inFlight) add() {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
}

func (f *inFlight) leave() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n--
	if f.n == 0 && f.stopped {
		close(f.idle)
	}
}

// stop refuses every request from now on and returns idle.
func (f *inFlight) stop() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.stopped {
		f.stopped = true
		if f.n == 0 {
			close(f.idle)
		}
	}
	return f.idle
}

// Stop makes c send no more requests and waits up to timeout for those
// under way, and for the passes that sent them (CallContext) to end. It
// reports whether nothing is left under way.
func (c *Clients) Stop(timeout time.Duration) bool {
	idle := c.flight.stop()
	select {
	case <-idle:
		return true
	default:
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-idle:
		return true
	case <-timer.C:
		return false
	}
}

// call is one pass's DigitalOcean calls (CallContext). From its first
// request sent until its cancel it counts as under way: a pass records
// DigitalOcean's answer before it ends, and an answer not on record is as
// good as lost to a new leader.
type call struct {
	mu     sync.Mutex
	ended  bool
	holder *inFlight // counting this call; nil until a request is sent
}

type callKey struct{}

// hold counts c in f once, unless it ended (its later requests count alone).
func (c *call) hold(f *inFlight) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ended && c.holder == nil {
		c.holder = f
		f.add()
	}
}

func (c *call) end() {
	c.mu.Lock()
	f := c.holder
	c.ended, c.holder = true, nil
	c.mu.Unlock()
	if f != nil {
		f.leave()
	}
}

// detach sees a request sent through to its answer or its deadline, whatever
// becomes of its caller's context: a request abandoned half-way, as when the
// controllers stop, leaves its outcome unknown (a droplet may exist whose ID
// no one has). The returned cancel frees the deadline's timer.
func detach(req *http.Request) (*http.Request, context.CancelFunc) {
	parent := req.Context()
	deadline, ok := parent.Deadline()
	if !ok {
		deadline = time.Now().Add(CallTimeout)
	}
	ctx, cancel := context.WithDeadline(context.WithoutCancel(parent), deadline)
	return req.WithContext(ctx), cancel
}

// cancelOnClose ends a detached request's context once its answer is read.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b cancelOnClose) Close() error {
	defer b.cancel()
	return b.ReadCloser.Close()
}
