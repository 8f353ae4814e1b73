package droplet

import (
	"sync"
	"time"

	"github.com/digitalocean/godo"
)

// bootTimes learns, per token, how fast a droplet can boot: the least of
// the boots seen recently, each counted from DigitalOcean's created_at to
// the last list that still showed it booting, which no boot can have been
// shorter than. Until a booting droplet is that old (less a margin), no list
// can show it active, and lists asked for it would only take room in the
// token's budget from creates and from droplets that are about to be active.
//
// Recent, because DigitalOcean's boots get slower as well as faster: a least
// boot kept forever would have every droplet listed from the fastest boot
// ever seen on, however slow boots have become since. The least of the boots
// seen within window, and of at least the last bootQuorum boots however old,
// falls at once with a faster boot and rises only once a whole window and
// that many boots have all been slower: one slow boot, or one slow list
// showing many, moves nothing, and a token that saw no boot for a while
// keeps what it learned.
type bootTimes struct {
	window time.Duration
	now    func() time.Time

	mu     sync.Mutex
	tokens map[*godo.Client][]bootSlot
}

// bootSlot is the boots noted in one window/bootSlots of time, kept as
// their least and their count, so a token's memory is bounded however many
// droplets boot.
type bootSlot struct {
	start time.Time
	least time.Duration
	count int
}

// bootMargin is the share of the fastest boot a droplet waits before it is
// read: boots vary, and one faster than any seen yet is read that late.
const bootMargin = 0.9

// DefaultBootWindow is how long a boot seen counts toward the shortest boot
// when Options.BootWindow is zero: long enough to hold many boots of a busy
// token, short enough that boots slower for good cost their extra lists
// for minutes, not for the process's life.
const DefaultBootWindow = 10 * time.Minute

// bootSlots is how many slots a window is kept in; bootQuorum is how many
// boots the shortest boot is taken over at least, older than the window if
// need be. A token keeps at most bootSlots+1+bootQuorum slots.
const (
	bootSlots  = 10
	bootQuorum = 10
)

func newBootTimes(window time.Duration) *bootTimes {
	if window <= 0 {
		window = DefaultBootWindow
	}
	return &bootTimes{window: window, now: time.Now, tokens: map[*godo.Client][]bootSlot{}}
}

// note records a boot known to have taken at least boot (nothing on a nil
// bootTimes, in tests).
func (b *bootTimes) note(client *godo.Client, boot time.Duration) {
	if b == nil || boot <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	slots := b.tokens[client]
	if n := len(slots); n > 0 && now.Sub(slots[n-1].start) < b.window/bootSlots {
		slots[n-1].least = min(slots[n-1].least, boot)
		slots[n-1].count++
	} else {
		slots = append(slots, bootSlot{start: now, least: boot, count: 1})
	}
	b.tokens[client] = b.recent(slots, now)
}

// recent is the newest of slots that hold every boot within the window and
// at least bootQuorum boots; their least is the shortest boot. b.mu is held.
func (b *bootTimes) recent(slots []bootSlot, now time.Time) []bootSlot {
	count, i := 0, len(slots)
	for i > 0 && (count < bootQuorum || now.Sub(slots[i-1].start) < b.window) {
		i--
		count += slots[i].count
	}
	return slots[i:]
}

// noteLists learns from two lists of one tag, taken one after the other:
// a droplet the first showed booting and the second active had been
// booting at least as long as its age at the first, less the second
// DigitalOcean's created_at leaves out. Only lists taken at most that long
// apart teach it: the boot then took less than twice as long, while two
// lists a period apart (the installation's, a minute) would teach that a
// droplet seen seconds after its create boots in seconds, and keep the
// shortest boot there.
func (b *bootTimes) noteLists(client *godo.Client, before, after *dropletList) {
	if b == nil {
		return
	}
	apart := after.taken.Sub(before.taken)
	for id, now := range after.droplets {
		then, ok := before.droplets[id]
		if !ok || then.status != "new" || now.status != "active" {
			continue
		}
		created, err := time.Parse(time.RFC3339, now.created)
		if boot := before.taken.Sub(created) - time.Second; err == nil && boot >= apart {
			b.note(client, boot)
		}
	}
}

// shortest is the shortest boot learned for client, false before any.
func (b *bootTimes) shortest(client *godo.Client) (time.Duration, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	slots := b.recent(b.tokens[client], b.now())
	if len(slots) == 0 {
		return 0, false
	}
	least := slots[0].least
	for _, s := range slots[1:] {
		least = min(least, s.least)
	}
	return least, true
}

// until is how long a droplet created at created has before a list could
// show it active; 0 when no boot has been seen yet.
func (b *bootTimes) until(client *godo.Client, created time.Time) time.Duration {
	fastest, ok := b.shortest(client)
	if !ok {
		return 0
	}
	return created.Add(time.Duration(float64(fastest) * bootMargin)).Sub(b.now())
}
