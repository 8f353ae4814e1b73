package droplet

import (
	"context"
	"sync"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshprobe"
)

const (
	// probeEvery paces login attempts of one droplet while it is expected
	// to come up soon.
	probeEvery = 2 * time.Second
	// probeEveryLate paces them once ready_timeout has passed: the VM is
	// reported failed, but a late sshd still makes it running.
	probeEveryLate = 30 * time.Second
	// probeTimeout bounds one attempt: connect, handshake, and the
	// cloud-init question.
	probeTimeout = 10 * time.Second
	// DefaultProbeWorkers bounds the logins in flight.
	DefaultProbeWorkers = 20
)

// prober runs login attempts off the handlers' workers, at most one in
// flight per droplet and a bounded number overall, and re-queues the
// droplet when one finishes.
type prober struct {
	ctx     context.Context
	slots   chan struct{}
	enqueue func(key string)
	probe   func(context.Context, sshprobe.Target) sshprobe.Result

	mu     sync.Mutex
	states map[string]*probeState
}

type probeState struct {
	running bool
	started time.Time
	last    *sshprobe.Result
}

func newProber(ctx context.Context, workers int, enqueue func(key string)) *prober {
	if workers <= 0 {
		workers = DefaultProbeWorkers
	}
	return &prober{ctx: ctx, slots: make(chan struct{}, workers), enqueue: enqueue, states: map[string]*probeState{},
		probe: func(ctx context.Context, t sshprobe.Target) sshprobe.Result {
			return sshprobe.Probe(ctx, t, probeTimeout)
		}}
}

// result returns the last finished attempt's result for key (nil before the
// first), and starts a new attempt at target when none is in flight and
// the last one started at least every ago.
func (p *prober) result(key string, every time.Duration, target sshprobe.Target) *sshprobe.Result {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.states[key]
	if s == nil {
		s = &probeState{}
		p.states[key] = s
	}
	if !s.running && time.Since(s.started) >= every {
		s.running, s.started = true, time.Now()
		go p.run(key, target)
	}
	return s.last
}

func (p *prober) run(key string, target sshprobe.Target) {
	select {
	case p.slots <- struct{}{}:
	case <-p.ctx.Done():
		return
	}
	r := p.probe(p.ctx, target)
	<-p.slots
	p.mu.Lock()
	if s := p.states[key]; s != nil {
		s.running, s.last = false, &r
	}
	p.mu.Unlock()
	p.enqueue(key)
}

// inFlightFor: an attempt for key started less than d ago and has not
// finished (it re-queues the droplet when it does).
func (p *prober) inFlightFor(key string, d time.Duration) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.states[key]
	return s != nil && s.running && time.Since(s.started) < d
}

// discard drops key's attempts: it is reachable, or gone.
func (p *prober) discard(key string) {
	p.mu.Lock()
	delete(p.states, key)
	p.mu.Unlock()
}
