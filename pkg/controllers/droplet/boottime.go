package droplet

import (
	"sync"
	"time"

	"github.com/digitalocean/godo"
)

// bootTimes learns, per token, how fast a droplet can boot: the least of
// the boots seen, each counted from DigitalOcean's created_at to the last
// list that still showed it booting, which no boot can have been shorter
// than. Until a booting droplet is that old (less a margin), no list can
// show it active, and lists asked for it would only take room in the
// token's budget from creates and from droplets that are about to be active.
type bootTimes struct {
	mu      sync.Mutex
	fastest map[*godo.Client]time.Duration
}

// bootMargin is the share of the fastest boot a droplet waits before it is
// read: boots vary, and one faster than any seen yet is read that late.
const bootMargin = 0.9

func newBootTimes() *bootTimes { return &bootTimes{fastest: map[*godo.Client]time.Duration{}} }

// note records a boot known to have taken at least boot (nothing on a nil
// bootTimes, in tests).
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

// noteLists learns from two lists of one tag, taken one after the other:
// a droplet the first showed booting and the second active had been
// booting at least as long as its age at the first, less the second
// DigitalOcean's created_at leaves out.
func (b *bootTimes) noteLists(client *godo.Client, before, after *fleetList) {
	if b == nil {
		return
	}
	for id, now := range after.droplets {
		then, ok := before.droplets[id]
		if !ok || then.Status != "new" || now.Status != "active" {
			continue
		}
		if created, err := time.Parse(time.RFC3339, now.Created); err == nil {
			b.note(client, before.taken.Sub(created)-time.Second)
		}
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
