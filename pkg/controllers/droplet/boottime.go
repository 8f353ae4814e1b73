package droplet

import (
	"sync"
	"time"

	"github.com/digitalocean/godo"
)

// bootTimes learns, per token, the fastest boot seen: from DigitalOcean's
// created_at to the first list that showed the droplet active. Until a
// booting droplet is that old (less a margin), no list can show it active,
// and lists asked for it would only take room in the token's budget from
// creates and from droplets that are about to be active.
type bootTimes struct {
	mu      sync.Mutex
	fastest map[*godo.Client]time.Duration
}

// bootMargin is the share of the fastest boot a droplet waits before it is
// read: boots vary, and a list may have shown the fastest one late.
const bootMargin = 0.75

func newBootTimes() *bootTimes { return &bootTimes{fastest: map[*godo.Client]time.Duration{}} }

// note records a boot seen to take boot (nothing on a nil bootTimes, in tests).
func (b *bootTimes) note(client *godo.Client, boot time.Duration) {
	if b == nil || boot <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if fastest, ok := b.fastest[client]; !ok || boot < fastest {
		b.fastest[client] = boot
	}
}

// until is how long a droplet created at created has before a list could
// show it active; 0 when no boot has been seen yet.
func (b *bootTimes) until(client *godo.Client, created time.Time) time.Duration {
	b.mu.Lock()
	fastest, ok := b.fastest[client]
	b.mu.Unlock()
	if !ok {
		return 0
	}
	return time.Until(created.Add(time.Duration(float64(fastest) * bootMargin)))
}
