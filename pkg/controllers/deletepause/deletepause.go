// Package deletepause tells when this installation's Droplet deletes have
// paused. An event's end deletes its droplets in batches over a minute or
// more. Work that costs DigitalOcean requests but saves no money (deleting
// deleted VMs' SSH keys, tidying our empty tags) waits for the pause, so it
// never takes the token's budget from droplets, which bill every hour.
package deletepause

import (
	"context"
	"sync"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers"
)

// MaxDeferDelays bounds how long a steady stream of deletes defers the
// work waiting for a pause: that many delays after it began to wait.
const MaxDeferDelays = 15

// Pause remembers when a Droplet was last seen being deleted.
type Pause struct {
	mu   sync.Mutex
	last time.Time
}

// New starts as if a Droplet had been deleted at now: a process that just
// started has not seen what the one before it was deleting.
func New(now time.Time) *Pause { return &Pause{last: now} }

// Register notes every Droplet being deleted or gone.
func (p *Pause) Register(ctx context.Context, c *controllers.Set) {
	c.Droplets.OnChange(ctx, "delete-pause", func(_ string, d *v1alpha1.Droplet) (*v1alpha1.Droplet, error) {
		if d == nil || d.DeletionTimestamp != nil {
			p.Note(time.Now())
		}
		return d, nil
	})
}

// Note records a Droplet deleted (or being deleted) at the given time.
func (p *Pause) Note(at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if at.After(p.last) {
		p.last = at
	}
}

// Last is when a Droplet was last seen being deleted.
func (p *Pause) Last() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// Wait is how long work that began waiting at since must still wait, as of
// now, for Droplet deletes to have paused for delay (or for the cap,
// MaxDeferDelays delays after since); 0 when it may go.
func (p *Pause) Wait(now, since time.Time, delay time.Duration) time.Duration {
	return min(p.Until(now, delay), max(0, since.Add(MaxDeferDelays*delay).Sub(now)))
}

// Until is how long, as of now, until Droplet deletes have paused for
// delay, with no cap: for work that loses nothing by waiting as long as
// deletes go on.
func (p *Pause) Until(now time.Time, delay time.Duration) time.Duration {
	return max(0, p.Last().Add(delay).Sub(now))
}
