package fakedo

import (
	"fmt"
	"time"
)

// CloudInitResult is what `cloud-init status` reports once cloud-init has
// stopped running, or CloudInitRunning for one that never does.
type CloudInitResult string

// The results modelled, with the exit codes of cloud-init 23.4 and later.
// Its "degraded" results (exit 2) are not modelled.
const (
	CloudInitDone    CloudInitResult = "done"    // "status: done", exit 0
	CloudInitError   CloudInitResult = "error"   // "status: error", exit 1
	CloudInitRunning CloudInitResult = "running" // "status: running", exit 0, until changed
)

func (r CloudInitResult) exitStatus() uint32 {
	if r == CloudInitError {
		return 1
	}
	return 0
}

// Guest is how a droplet's operating system behaves once the droplet is
// active. The zero value is a healthy image: sshd up at once, cloud-init
// done.
//
// Durations are in Options.Now time, as BootDelay is. The fake has no time
// scale of its own: a caller that scales BootDelay (the bench) scales these
// the same way.
type Guest struct {
	// SSHDelay is how long after the droplet turns active sshd starts
	// listening; until then connections are refused, as on a booting VM.
	SSHDelay time.Duration
	// SSHDown keeps sshd from listening at all until SetGuest clears it.
	SSHDown bool
	// RefuseKeys makes sshd reject every public key, as an image that
	// never installed the droplet's keys would.
	RefuseKeys bool
	// CloudInit is what cloud-init ends with; empty means CloudInitDone.
	CloudInit CloudInitResult
	// CloudInitDelay is how long `cloud-init status` says running after
	// sshd came up, before it says CloudInit.
	CloudInitDelay time.Duration
}

// normalized fills the defaults and rejects results it cannot model.
func (g Guest) normalized() (Guest, error) {
	switch g.CloudInit {
	case "":
		g.CloudInit = CloudInitDone
	case CloudInitDone, CloudInitError, CloudInitRunning:
	default:
		return g, fmt.Errorf("fake: unknown cloud-init result %q", g.CloudInit)
	}
	g.SSHDelay, g.CloudInitDelay = max(g.SSHDelay, 0), max(g.CloudInitDelay, 0)
	return g, nil
}

// SetDefaultGuest sets the Guest of droplets created from now on; existing
// droplets keep theirs (see SetGuest).
func (s *Server) SetDefaultGuest(g Guest) error {
	g, err := g.normalized()
	if err != nil {
		return err
	}
	s.timingMu.Lock()
	defer s.timingMu.Unlock()
	s.opts.Guest = g
	return nil
}

func (s *Server) defaultGuest() Guest {
	s.timingMu.RLock()
	defer s.timingMu.RUnlock()
	return s.opts.Guest
}

// SetGuest changes how one live droplet's operating system behaves, at
// once: clearing SSHDown starts sshd now (or when SSHDelay after the boot
// ends, if that is later), setting it stops sshd and cuts its sessions,
// RefuseKeys applies to the next login, and CloudInit to the next
// `cloud-init status` (waiting ones included). A changed SSHDelay matters
// only while sshd has not come up yet; CloudInitDelay counts from when it
// did.
func (s *Server) SetGuest(token string, dropletID int, g Guest) error {
	g, err := g.normalized()
	if err != nil {
		return err
	}
	return s.liveDroplet(token, dropletID, func(d *droplet) {
		now := s.now()
		if d.guest.SSHDown && !g.SSHDown {
			d.sshDownClearedAt = now
		}
		d.guest = g
		d.guestChanged()
		s.refresh(d, now)
	})
}

// sshUpAt is when sshd comes up on an active droplet whose guest lets it:
// SSHDelay after the droplet turned active, or when SSHDown was cleared if
// that is later.
func (d *droplet) sshUpAt() time.Time {
	at := d.activeSince.Add(d.guest.SSHDelay)
	if d.sshDownClearedAt.After(at) {
		return d.sshDownClearedAt
	}
	return at
}

// cloudInitAt is what `cloud-init status` says at now and, while that is
// "running" only because of CloudInitDelay, how long until it changes.
func (d *droplet) cloudInitAt(now time.Time) (CloudInitResult, time.Duration) {
	if d.sshUpSince.IsZero() {
		return CloudInitRunning, 0 // sshd is going down; its sessions are being cut
	}
	if left := d.sshUpSince.Add(d.guest.CloudInitDelay).Sub(now); left > 0 {
		return CloudInitRunning, left
	}
	return d.guest.CloudInit, 0
}

// guestChanged wakes the commands waiting on this droplet's guest.
func (d *droplet) guestChanged() {
	if d.changed != nil {
		close(d.changed)
		d.changed = nil
	}
}

// changes is closed at the next guestChanged.
func (d *droplet) changes() <-chan struct{} {
	if d.changed == nil {
		d.changed = make(chan struct{})
	}
	return d.changed
}

// liveGuest is a droplet as its sshd sees it: every question takes the
// account lock and reads the droplet's current guest.
type liveGuest struct {
	s *Server
	d *droplet
}

func (g liveGuest) acceptsKey(wireKey []byte) bool {
	g.d.acc.mu.Lock()
	defer g.d.acc.mu.Unlock()
	return !g.d.guest.RefuseKeys && g.d.authorized[string(wireKey)]
}

func (g liveGuest) cloudInit() cloudInitView {
	g.d.acc.mu.Lock()
	defer g.d.acc.mu.Unlock()
	now := g.s.now()
	g.s.refresh(g.d, now)
	state, next := g.d.cloudInitAt(now)
	return cloudInitView{state: state, next: next, changed: g.d.changes()}
}
