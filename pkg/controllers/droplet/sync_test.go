package droplet

import (
	"context"
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshprobe"
)

// A new Droplet's first pass writes nothing only while its create is
// moments away; anything it found, or a longer wait, is written.
func TestFirstLookWritesOnlyWhatItFound(t *testing.T) {
	fresh := func() *v1alpha1.Droplet {
		d := &v1alpha1.Droplet{}
		d.Spec.Name = "hf-vm-1"
		return d
	}
	for _, c := range []struct {
		name    string
		orig    func() *v1alpha1.Droplet
		pass    func(d *v1alpha1.Droplet)
		requeue time.Duration
		skip    bool
	}{
		{"gathering mates", fresh, func(*v1alpha1.Droplet) {}, 250 * time.Millisecond, true},
		{"waiting longer than a moment", fresh, func(*v1alpha1.Droplet) {}, 5 * time.Second, false},
		{"no look scheduled", fresh, func(*v1alpha1.Droplet) {}, 0, false},
		{"waiting for its Key", fresh, func(d *v1alpha1.Droplet) {
			events.SetCondition(d, v1alpha1.Created, false, v1alpha1.ReasonWaitingForKey, "waiting for Key")
		}, 250 * time.Millisecond, false},
		{"adopted", fresh, func(d *v1alpha1.Droplet) { d.Status.DropletID = 7 }, time.Second, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			orig := c.orig()
			d := orig.DeepCopy()
			c.pass(d)
			if got := firstLookChangedNothing(orig, d, c.requeue); got != c.skip {
				t.Fatalf("write skipped: %v, want %v", got, c.skip)
			}
		})
	}
}

// The pass that finds the droplet active leaves Ready unwritten only while
// its first login check is in flight: the check's result re-queues the
// Droplet, whose next pass writes both.
func TestActiveWaitsForTheFirstLoginOnlyWhileItRuns(t *testing.T) {
	booting := func() *v1alpha1.Droplet {
		d := &v1alpha1.Droplet{}
		d.Namespace, d.Name, d.UID = "ns", "vm", "d1"
		d.Status.DropletID = 7
		events.SetCondition(d, v1alpha1.Ready, false, "Booting", "droplet status is new")
		return d
	}
	activeNow := func(orig *v1alpha1.Droplet) *v1alpha1.Droplet {
		d := orig.DeepCopy()
		events.SetCondition(d, v1alpha1.Ready, true, "Active", "droplet is active")
		return d
	}
	release := make(chan struct{})
	defer close(release)
	inFlight := newProber(context.Background(), 1, func(string) {})
	inFlight.probe = func(context.Context, sshprobe.Target) sshprobe.Result {
		<-release
		return sshprobe.Result{OK: true}
	}
	inFlight.result("ns/vm", 0, sshprobe.Target{})
	idle := newProber(context.Background(), 1, func(string) {})
	slow := newProber(context.Background(), 1, func(string) {})
	slow.probe = inFlight.probe
	slow.result("ns/vm", 0, sshprobe.Target{})
	slow.mu.Lock()
	slow.states["ns/vm"].started = time.Now().Add(-2 * firstLoginWait)
	slow.mu.Unlock()

	for _, c := range []struct {
		name   string
		prober *prober
		pass   func(orig *v1alpha1.Droplet) *v1alpha1.Droplet
		held   bool
		skip   bool
	}{
		{"active, login in flight", inFlight, activeNow, false, true},
		{"active, no login started (nothing to wait for)", idle, activeNow, false, false},
		{"active, a login in flight for too long", slow, activeNow, false, false},
		{"active, an Event waits for the write", inFlight, activeNow, true, false},
		{"active and the login's result in", inFlight, func(orig *v1alpha1.Droplet) *v1alpha1.Droplet {
			d := activeNow(orig)
			events.SetCondition(d, v1alpha1.Reachable, true, "LoggedIn", "logged in")
			return d
		}, false, false},
		{"still booting", inFlight, func(orig *v1alpha1.Droplet) *v1alpha1.Droplet { return orig.DeepCopy() }, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := (&handler{prober: c.prober}).withPass(nil)
			orig := booting()
			if c.held {
				h.pass.Held.For(orig)
			}
			if got := h.firstLoginUnderWay(orig, c.pass(orig)); got != c.skip {
				t.Fatalf("write skipped: %v, want %v", got, c.skip)
			}
		})
	}
}
