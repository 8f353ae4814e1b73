package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// pollInterval is how often the fake is looked at, in real time. A deleted
// droplet stays visible for the scaled delete lag, so keep this well below it.
const pollInterval = 20 * time.Millisecond

// vmTimes are one VM's moments, all on this machine's clock (the fake's too).
type vmTimes struct {
	ready   time.Time // Gargantua's status write returned: the VM is the controller's now
	running time.Time // first seen running with an IP
	// The VM's deletion, two ways: the benchmark's delete call returned, and
	// the benchmark's watch first showed it. Under load either can come after
	// the controller acted on it: see deletedAt.
	deleted, deleteSeen time.Time
	// Of its droplet at the fake: created, boot delay over, gone (all of
	// its droplets, should there be several: DigitalOcean accepted the
	// delete of the last). goneAfter is gone when the fake showed the
	// delete, else the last poll that saw a droplet live (it was purged
	// between two polls, and gone is only an upper bound).
	created, active, gone, goneAfter time.Time
	dropletIDs                       map[int]bool
	// vanished is when the informer saw the VM leave Kubernetes (its
	// finalizers released).
	vanished time.Time
}

// goneFromKubeFirst tells whether the VM left Kubernetes before DigitalOcean
// surely accepted the delete of its droplet: its finalizer was released too
// early. A VM that never had a droplet has nothing to wait for.
func (v *vmTimes) goneFromKubeFirst() bool {
	if v.vanished.IsZero() || len(v.dropletIDs) == 0 {
		return false
	}
	return v.gone.IsZero() || v.vanished.Before(v.goneAfter)
}

// deletedAt is the earliest sign that the VM is deleted. The apiserver
// commits a deletion before it answers the call and before it tells any
// watch, and a busy one can take longer for either than the controller takes
// to delete the droplet (the call's return alone then gave negative
// delete-to-gone times). Both come after the commit, so the earlier of the
// two is the closer bound.
func (v *vmTimes) deletedAt() time.Time {
	if v.deleteSeen.IsZero() || (!v.deleted.IsZero() && v.deleted.Before(v.deleteSeen)) {
		return v.deleted
	}
	return v.deleteSeen
}

// tracker watches the VMs through an informer and the fake through its
// inspection API, and records every VM's vmTimes.
type tracker struct {
	do     *fakedo.Server
	tokens []string

	mu        sync.Mutex
	vms       map[string]*vmTimes
	byDroplet map[string]string // droplet name -> VM name
	lastPoll  time.Time
	// addUnknown makes set add a VM it does not know yet.
	addUnknown bool
	// pollEvery is how often pollFake looks, pollInterval unless set: the
	// fake's own timestamps time every event, so a poll only needs to come
	// before a deleted droplet is purged (the delete lag).
	pollEvery atomic.Int64
}

// setPollEvery changes how often pollFake looks at the fake from its next poll on.
func (t *tracker) setPollEvery(d time.Duration) { t.pollEvery.Store(int64(d)) }

// newTracker tracks the droplets of every token's account; VM names are
// unique across them (one namespace).
func newTracker(do *fakedo.Server, tokens ...string) *tracker {
	return &tracker{do: do, tokens: tokens, vms: map[string]*vmTimes{}, byDroplet: map[string]string{}}
}

// add registers a VM about to be created.
func (t *tracker) add(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.addLocked(name)
}

func (t *tracker) addLocked(name string) *vmTimes {
	v := &vmTimes{dropletIDs: map[int]bool{}}
	t.vms[name] = v
	t.byDroplet[digitalocean.DropletName(name)] = name
	return v
}

// set changes a VM's times; an unknown VM is added first when addUnknown is
// set (VMs whose names Gargantua picks, known only once they exist: their
// watch events may come before the benchmark learns the name).
func (t *tracker) set(name string, f func(v *vmTimes)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v := t.vms[name]
	if v == nil && t.addUnknown {
		v = t.addLocked(name)
	}
	if v != nil {
		f(v)
	}
}

// snapshot copies the times of names.
func (t *tracker) snapshot(names []string) []vmTimes {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]vmTimes, 0, len(names))
	for _, n := range names {
		if v := t.vms[n]; v != nil {
			out = append(out, *v)
		}
	}
	return out
}

// count is how many of names satisfy f.
func (t *tracker) count(names []string, f func(v *vmTimes) bool) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, name := range names {
		if v := t.vms[name]; v != nil && f(v) {
			n++
		}
	}
	return n
}

// watchVMs runs a namespaced VM informer until ctx ends. Its handlers run on
// the informer's own goroutine, so a running VM is timed as it is delivered,
// not after a work queue.
func (t *tracker) watchVMs(ctx context.Context, cfg *rest.Config, namespace string) error {
	f, err := hobbyfarm.NewFactoryFromConfigWithOptions(cfg, &hobbyfarm.FactoryOptions{Namespace: namespace})
	if err != nil {
		return err
	}
	inf := f.Hobbyfarm().V1().VirtualMachine().Informer()
	seen := func(obj any) {
		vm, ok := obj.(*hfv1.VirtualMachine)
		if !ok {
			return
		}
		now := time.Now()
		t.set(vm.Name, func(v *vmTimes) { v.saw(vm, now) })
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    seen,
		UpdateFunc: func(_, obj any) { seen(obj) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if vm, ok := obj.(*hfv1.VirtualMachine); ok {
				now := time.Now()
				t.set(vm.Name, func(v *vmTimes) {
					v.sawDeletion(now)
					v.vanished = now
				})
			}
		},
	}); err != nil {
		return err
	}
	if err := f.Start(ctx, 1); err != nil {
		return err
	}
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("VM informer did not sync: %w", ctx.Err())
	}
	return nil
}

// saw stamps what the watch shows of vm at now: running with an IP, or
// deleted.
func (v *vmTimes) saw(vm *hfv1.VirtualMachine, now time.Time) {
	if v.running.IsZero() && vm.Status.Status == hfv1.VmStatusRunning && vm.Status.PublicIP != "" {
		v.running = now
	}
	if vm.DeletionTimestamp != nil {
		v.sawDeletion(now)
	}
}

// sawDeletion stamps the first time the watch shows the VM deleted (marked, or
// gone when it had no finalizer left).
func (v *vmTimes) sawDeletion(now time.Time) {
	if v.deleteSeen.IsZero() {
		v.deleteSeen = now
	}
}

// pollFake records droplet creation, boot and deletion times until ctx ends.
func (t *tracker) pollFake(ctx context.Context) {
	for {
		t.observeFake(time.Now())
		every := time.Duration(t.pollEvery.Load())
		if every <= 0 {
			every = pollInterval
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}

func (t *tracker) observeFake(now time.Time) {
	var lives []fakedo.DropletLife
	for _, token := range t.tokens {
		lives = append(lives, t.do.DropletLives(token)...)
	}
	type agg struct {
		live        int
		lastDeleted time.Time
	}
	byVM := map[string]*agg{}
	t.mu.Lock()
	defer t.mu.Unlock()
	previous := t.lastPoll
	t.lastPoll = now
	for _, l := range lives {
		name, ok := t.byDroplet[l.Name]
		if !ok {
			continue
		}
		v := t.vms[name]
		v.dropletIDs[l.ID] = true
		if v.created.IsZero() || l.Created.Before(v.created) {
			v.created, v.active = l.Created, l.Active
		}
		a := byVM[name]
		if a == nil {
			a = &agg{}
			byVM[name] = a
		}
		if l.Deleted.IsZero() {
			a.live++
		} else if l.Deleted.After(a.lastDeleted) {
			a.lastDeleted = l.Deleted
		}
	}
	for name, v := range t.vms {
		if v.deletedAt().IsZero() || !v.gone.IsZero() || len(v.dropletIDs) == 0 {
			continue
		}
		switch a := byVM[name]; {
		case a == nil:
			// Purged between two polls: the delete came after the
			// previous one and before now.
			v.gone, v.goneAfter = now, previous
		case a.live == 0:
			v.gone, v.goneAfter = a.lastDeleted, a.lastDeleted
		}
	}
}
