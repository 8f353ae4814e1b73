package droplet

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshprobe"
)

// One attempt per droplet at a time, no more often than asked, and the
// droplet is re-queued when one finishes.
func TestProberPacesAttempts(t *testing.T) {
	release := make(chan struct{})
	var attempts, enqueued atomic.Int32
	p := newProber(context.Background(), 2, func(string) { enqueued.Add(1) })
	p.probe = func(context.Context, sshprobe.Target) sshprobe.Result {
		attempts.Add(1)
		<-release
		return sshprobe.Result{Reason: sshprobe.ReasonUnreachable}
	}
	for range 5 {
		if r := p.result("ns/vm", 0, sshprobe.Target{}); r != nil {
			t.Fatalf("a result %+v before any attempt finished", r)
		}
	}
	waitFor(t, func() bool { return attempts.Load() == 1 })
	close(release)
	waitFor(t, func() bool { return enqueued.Load() == 1 })
	if r := p.result("ns/vm", time.Hour, sshprobe.Target{}); r == nil || r.Reason != sshprobe.ReasonUnreachable {
		t.Fatalf("result %+v, want the finished attempt's", r)
	}
	time.Sleep(50 * time.Millisecond)
	if n := attempts.Load(); n != 1 {
		t.Errorf("%d attempts within the pacing interval, want 1", n)
	}
}

// The number of logins in flight is bounded across droplets.
func TestProberBoundsConcurrency(t *testing.T) {
	release := make(chan struct{})
	var inFlight, most atomic.Int32
	p := newProber(context.Background(), 3, func(string) {})
	p.probe = func(context.Context, sshprobe.Target) sshprobe.Result {
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		inFlight.Add(-1)
		return sshprobe.Result{OK: true}
	}
	for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
		p.result(k, 0, sshprobe.Target{})
	}
	waitFor(t, func() bool { return inFlight.Load() == 3 })
	time.Sleep(50 * time.Millisecond)
	close(release)
	if m := most.Load(); m != 3 {
		t.Errorf("at most %d logins in flight, want 3", m)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5s")
		}
	}
}
