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
	// ResyncPerDroplet GETs each droplet on its own, as the original alpha
	// did: 120 requests per VM-hour at a 30 s period, so a token's hourly
	// budget lasts about 42 VMs. Kept for comparison in the benchmark.
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

// fleet holds, per token, the last list of this installation's droplets.
// Every Droplet re-reads its droplet from that list, and whichever needs a
// newer list than there is takes it for all: with N droplets a period costs
// ceil(N/200) requests instead of N.
type fleet struct {
	ctx   context.Context
	tag   string
	lists singleflight.Group
	// changed is told which droplet ids a new list shows changed or gone.
	changed func(ids []int)

	mu      sync.Mutex
	byToken map[*godo.Client]*fleetList
}

// fleetList is one list answer, by droplet id.
type fleetList struct {
	taken    time.Time
	droplets map[int]*godo.Droplet
}

func newFleet(ctx context.Context, tag string, changed func(ids []int)) *fleet {
	return &fleet{ctx: ctx, tag: tag, changed: changed, byToken: map[*godo.Client]*fleetList{}}
}

// get returns droplet id as listed no longer than maxAge ago, and not
// before notBefore (a list older than the droplet cannot show it), listing
// again when the last list is older. A nil droplet means the list lacks it:
// gone, or too new to be listed yet; the caller asks for it by id.
func (f *fleet) get(client *godo.Client, id int, maxAge time.Duration, notBefore time.Time) (*godo.Droplet, error) {
	f.mu.Lock()
	list := f.byToken[client]
	f.mu.Unlock()
	if list == nil || time.Since(list.taken) >= maxAge || list.taken.Before(notBefore) {
		var err error
		if list, err = f.relist(client); err != nil {
			return nil, err
		}
	}
	return list.droplets[id], nil
}

// relist lists the token's droplets once, however many Droplets ask at once.
func (f *fleet) relist(client *godo.Client) (*fleetList, error) {
	v, err, _ := f.lists.Do(fmt.Sprintf("%p", client), func() (any, error) {
		// Not the caller's context: the answer serves every waiting Droplet.
		ctx, cancel := digitalocean.CallContext(f.ctx, digitalocean.PriorityResync)
		defer cancel()
		taken := time.Now()
		found, err := digitalocean.ListByTag(ctx, client, f.tag)
		if err != nil {
			return nil, err
		}
		list := &fleetList{taken: taken, droplets: make(map[int]*godo.Droplet, len(found))}
		for i := range found {
			list.droplets[found[i].ID] = &found[i]
		}
		f.mu.Lock()
		previous := f.byToken[client]
		f.byToken[client] = list
		f.mu.Unlock()
		if previous != nil {
			f.changed(changedIDs(previous, list))
		}
		return list, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*fleetList), nil
}

// changedIDs are the droplets whose state (as the status records it)
// differs between two lists, or that left the list.
func changedIDs(before, after *fleetList) []int {
	var out []int
	for id, old := range before.droplets {
		now, ok := after.droplets[id]
		if !ok || dropletState(old) != dropletState(now) {
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
