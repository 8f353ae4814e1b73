package droplet

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/digitalocean/godo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"golang.org/x/sync/singleflight"
)

// ResyncMode says how running droplets are re-read from DigitalOcean.
type ResyncMode string

const (
	// ResyncBatched re-reads all of a token's droplets with one paginated
	// list by the installation's tag per period, shared by every Droplet.
	ResyncBatched ResyncMode = "batched"
	// ResyncPerDroplet GETs each droplet on its own: 120 requests per
	// VM-hour at a 30 s period, so a token's hourly budget lasts about 42
	// VMs. The benchmark's baseline runs it, to measure what batching saves.
	ResyncPerDroplet ResyncMode = "per-droplet"
)

// ParseResyncMode checks a --resync-mode value.
func ParseResyncMode(s string) (ResyncMode, error) {
	switch m := ResyncMode(s); m {
	case ResyncBatched, ResyncPerDroplet:
		return m, nil
	}
	return "", fmt.Errorf("%q is neither %s nor %s", s, ResyncBatched, ResyncPerDroplet)
}

// listCache holds, per token, the last list of this installation's droplets,
// and of each recent boot bucket (digitalocean.BootTag). Every Droplet
// re-reads its droplet from one of those lists, and whichever needs a newer
// list than there is takes it for all: with N droplets a period costs
// ceil(N/200) requests instead of N, and a booting droplet's list holds
// only the droplets created around the same time.
type listCache struct {
	ctx   context.Context
	tag   string
	lists singleflight.Group
	// changed is told which droplet ids a new list shows changed or gone.
	changed func(ids []int)
	// boots learns from two lists in a row how fast droplets boot.
	boots *bootTimes
	// room says how long until a token's budget sends a request of a
	// priority (digitalocean.Clients.Room); nil: never room to spare.
	room func(*godo.Client, digitalocean.Priority) time.Duration

	mu     sync.Mutex
	byList map[listKey]*dropletList
}

// listKey names one list: a token's droplets with one tag.
type listKey struct {
	client *godo.Client
	tag    string
}

// dropletList is one list answer, by droplet id.
type dropletList struct {
	taken    time.Time
	droplets map[int]*listedDroplet
}

// droplet is id as the list shows it, nil if it lacks it.
func (l *dropletList) droplet(id int) *godo.Droplet {
	if d := l.droplets[id]; d != nil {
		return d.droplet()
	}
	return nil
}

// unusedListLifetime is how long a list no Droplet asked for is kept: boot
// buckets stop being read once their droplets are active.
const unusedListLifetime = 10 * time.Minute

func newListCache(ctx context.Context, tag string, changed func(ids []int), boots *bootTimes,
	room func(*godo.Client, digitalocean.Priority) time.Duration) *listCache {
	return &listCache{ctx: ctx, tag: tag, changed: changed, boots: boots, room: room, byList: map[listKey]*dropletList{}}
}

// get returns droplet id as listed with tag (the installation's when "")
// no longer than maxAge ago, and not before notBefore (a list older than
// the droplet cannot show it), listing again when the last list is older.
// A newer list of one of the other tags that holds the droplet counts as
// well: a droplet read from its boot bucket's list while it booted must
// not go back to an older installation list's view once it is active, nor
// wait for a new one. When the token's budget holds a new list back, the
// freshest there is serves. A nil droplet means the list lacks it: gone, or
// too new to be listed yet; the caller asks for it by id.
func (f *listCache) get(client *godo.Client, id int, maxAge time.Duration, notBefore time.Time, tag string, newer ...string) (*godo.Droplet, error) {
	key := f.key(client, tag)
	best := f.freshest(key, id, newer)
	if best != nil && f.serves(key, best, maxAge) && !best.taken.Before(notBefore) {
		return best.droplet(id), nil
	}
	fresh, err := f.relist(key)
	switch {
	case err == nil:
		return fresh.droplet(id), nil
	case best != nil && !best.taken.Before(notBefore) && digitalocean.IsHeldBack(err):
		// A Droplet that only took a list it asked for itself would, with
		// hundreds asking in turn, see hardly any of the lists that fit in
		// the token's budget.
		return best.droplet(id), nil
	}
	return nil, err
}

// nearlyStale is the share of its period after which a boot bucket's list
// is taken again while the token's budget has room to spare.
const nearlyStale = 0.9

// serves: list is young enough for a read of key that wants it at most
// maxAge old. Booting droplets' passes bunch up right after each list, and
// come back a period later, a hair before it is stale: reusing it then
// sent them all to the list after next, a whole period late for the users
// waiting on those droplets. When the budget is tight (a flood's creates)
// the extra list is not worth a create's room.
func (f *listCache) serves(key listKey, list *dropletList, maxAge time.Duration) bool {
	age := time.Since(list.taken)
	switch {
	case age >= maxAge:
		return false
	case key.tag == f.tag || float64(age) < nearlyStale*float64(maxAge) || f.room == nil:
		return true
	}
	return f.room(key.client, digitalocean.PriorityResync) > 0
}

// freshest is key's last list, or a newer one of the other tags that holds
// droplet id.
func (f *listCache) freshest(key listKey, id int, others []string) *dropletList {
	f.mu.Lock()
	defer f.mu.Unlock()
	best := f.byList[key]
	for _, other := range others {
		l := f.byList[f.key(key.client, other)]
		if l != nil && l.droplets[id] != nil && !l.droplets[id].carried && (best == nil || l.taken.After(best.taken)) {
			best = l
		}
	}
	return best
}

func (f *listCache) key(client *godo.Client, tag string) listKey {
	if tag == "" {
		tag = f.tag
	}
	return listKey{client, tag}
}

// relist takes one list, however many Droplets ask for it at once.
func (f *listCache) relist(key listKey) (*dropletList, error) {
	v, err, _ := f.lists.Do(fmt.Sprintf("%p/%s", key.client, key.tag), func() (any, error) {
		// Not the caller's context: the answer serves every waiting Droplet.
		ctx, cancel := digitalocean.CallContext(f.ctx)
		defer cancel()
		taken := time.Now()
		found, err := digitalocean.DropletsOf(key.client).ListSummariesByTag(ctx, key.tag, f.priority(key))
		if err != nil {
			return nil, err
		}
		list := &dropletList{taken: taken, droplets: make(map[int]*listedDroplet, len(found))}
		kept := make([]listedDroplet, len(found))
		for i := range found {
			kept[i] = listed(&found[i])
			list.droplets[kept[i].id] = &kept[i]
		}
		f.mu.Lock()
		previous := f.byList[key]
		if previous != nil && len(found) >= digitalocean.SummariesPerPage {
			carryOver(previous, list)
		}
		f.byList[key] = list
		f.dropUnused(taken)
		f.mu.Unlock()
		if previous != nil {
			f.boots.noteLists(key.client, previous, list)
			f.changed(changedIDs(previous, list))
		}
		return list, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*dropletList), nil
}

// carryOver keeps in a list of more than one page, as the previous list
// showed them, the droplets it lacks: the pages may have skipped them
// (digitalocean.SummariesPerPage), and each would otherwise be asked for by
// its own GET, hundreds at once while an event's droplets are deleted. A
// droplet is carried once: the next list that lacks it too reports it
// gone, a period later than a single page would.
func carryOver(previous, list *dropletList) {
	for id, old := range previous.droplets {
		if _, listed := list.droplets[id]; !listed && !old.carried {
			kept := *old
			kept.carried = true
			list.droplets[id] = &kept
		}
	}
}

// priority is a list's: a boot bucket's users wait for it as for their
// droplets' creates, and at a create's priority the lists keep pace with a
// flood's multi-creates, which at resync priority left them a sliver of
// the token's budget for a minute. Re-reading active droplets can wait.
func (f *listCache) priority(key listKey) digitalocean.Priority {
	if key.tag == f.tag {
		return digitalocean.PriorityResync
	}
	return digitalocean.PriorityCreate
}

// dropUnused forgets the boot lists nobody relisted for a while; the
// installation's lists stay. f.mu is held.
func (f *listCache) dropUnused(now time.Time) {
	for key, list := range f.byList {
		if key.tag != f.tag && now.Sub(list.taken) > unusedListLifetime {
			delete(f.byList, key)
		}
	}
}

// changedIDs are the droplets whose state (as the status records it)
// differs between two lists, or that left the list.
func changedIDs(before, after *dropletList) []int {
	var out []int
	for id, old := range before.droplets {
		now, ok := after.droplets[id]
		if !ok || old.observedState != now.observedState {
			out = append(out, id)
		}
	}
	for id := range after.droplets {
		if _, ok := before.droplets[id]; !ok {
			out = append(out, id)
		}
	}
	return out
}

type observedState struct {
	status, public4, private4, public6 string
}

func dropletState(d *godo.Droplet) observedState {
	s := observedState{status: d.Status}
	s.public4, _ = d.PublicIPv4()
	s.private4, _ = d.PrivateIPv4()
	s.public6, _ = d.PublicIPv6()
	return s
}
