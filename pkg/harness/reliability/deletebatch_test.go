package reliability

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestBatchedDeleteCrashAtEachPoint SIGKILLs the controller at each point of
// a batched delete (docs/reliability.md, "Batched delete"), holding the
// fake's request so the kill lands exactly there, and starts a new process.
// Half the VMs of a shared-key Environment are deleted. Afterwards every
// deleted VM's droplet is gone, the fake holds exactly the living VMs'
// droplets, no living VM's droplet was ever named under a one-off delete
// tag, and no deleted VM or Droplet left Kubernetes while its droplet still
// existed.
func TestBatchedDeleteCrashAtEachPoint(t *testing.T) {
	bin := buildController(t)
	for _, point := range []struct {
		name string
		// hold stops the first batch at the point.
		hold func(r *crashRun) *fakedo.Hold
		// check runs at the point, before the kill.
		check func(r *crashRun, doomed map[string]int)
	}{
		{name: "after-tag-created", hold: func(r *crashRun) *fakedo.Hold {
			return r.holdAfterApply(fakedo.RouteCreateTag)
		}, check: func(r *crashRun, doomed map[string]int) {
			if len(r.deleteTagged()) != 0 {
				r.t.Fatal("droplets tagged before the tag's answer came")
			}
		}},
		{name: "after-tag-resources-before-delete", hold: func(r *crashRun) *fakedo.Hold {
			return r.holdBeforeApply(fakedo.RouteDeleteDropletsByTag)
		}, check: func(r *crashRun, doomed map[string]int) {
			tagged := r.deleteTagged()
			if len(tagged) == 0 {
				r.t.Fatal("no droplet under a delete tag at the delete")
			}
			live := r.liveIDs()
			for id := range tagged {
				if !slices.Contains(live, id) {
					r.t.Fatalf("tagged droplet %d is gone before the delete", id)
				}
			}
		}},
		{name: "after-delete-applied-answer-lost", hold: func(r *crashRun) *fakedo.Hold {
			return r.holdAfterApply(fakedo.RouteDeleteDropletsByTag)
		}, check: func(r *crashRun, doomed map[string]int) {
			gone := 0
			live := r.liveIDs()
			for _, id := range doomed {
				if !slices.Contains(live, id) {
					gone++
				}
			}
			if gone == 0 {
				r.t.Fatal("no droplet deleted although the delete by tag was applied")
			}
		}},
	} {
		t.Run(point.name, func(t *testing.T) {
			r := newCrashRun(newWorld(t, worldOptions{noController: true}), bin)
			env := r.sharedKeyEnv("batch")
			names := r.createVMs(env, "del", 6)
			r.start()
			r.waitRunning(2*time.Minute, names...)
			ids := r.dropletIDs(names)
			doomed, living := map[string]int{}, map[string]int{}
			for i, n := range names {
				if i%2 == 0 {
					doomed[n] = ids[n]
				} else {
					living[n] = ids[n]
				}
			}

			hold := point.hold(r)
			releases := r.watchReleases(doomed)
			for n := range doomed {
				r.deleteVMs(n)
			}
			r.await(hold, "the batched delete's point")
			point.check(r, doomed)
			r.expectHeldWhileDeleting(doomed)
			r.kill()
			for _, h := range r.holds {
				h.Release()
			}
			r.start()

			r.eventually(2*time.Minute, "deleted VMs gone", func() string { return r.deletedVMsGone(doomed) })
			releases.check(r.world)
			r.expectOnly(living)

			for n := range living {
				r.deleteVMs(n)
			}
			r.deleteEnvAndWaitAllGone(env, 2*time.Minute)
			t.Logf("requests:%s", counts(r.do.RequestCounts()))
		})
	}
}

// expectHeldWhileDeleting waits until the deleted VMs' Droplets are being
// deleted, gives their cleanups a few passes, and fails if one let its
// Droplet go: no delete was accepted yet (nor heard of, for a lost answer).
func (w *world) expectHeldWhileDeleting(doomed map[string]int) {
	w.t.Helper()
	w.eventually(30*time.Second, "the deleted VMs' Droplets being deleted", func() string {
		for name := range doomed {
			d, err := w.drops.Get(w.ns, name, metav1.GetOptions{})
			if err != nil {
				return fmt.Sprintf("Droplet %s: %v", name, err)
			}
			if d.DeletionTimestamp == nil {
				return "Droplet " + name + " not being deleted yet"
			}
		}
		return ""
	})
	time.Sleep(3 * time.Second) // a few of the cleanups' polls
	for name := range doomed {
		if _, err := w.drops.Get(w.ns, name, metav1.GetOptions{}); err != nil {
			w.t.Errorf("Droplet %s released before DigitalOcean's answer to its delete: %v", name, err)
		}
	}
}

// expectOnly fails unless DigitalOcean holds exactly the living VMs'
// droplets, they run, and none was ever named under a one-off delete tag.
func (w *world) expectOnly(living map[string]int) {
	w.t.Helper()
	var want []int
	for _, id := range living {
		want = append(want, id)
	}
	slices.Sort(want)
	if got := w.liveIDs(); !slices.Equal(got, want) {
		w.t.Errorf("DigitalOcean holds droplets %v, want the living VMs' %v", got, want)
	}
	tagged := w.deleteTagged()
	for name, id := range living {
		if _, ok := tagged[id]; ok {
			w.t.Errorf("living VM %s's droplet %d was named under a one-off delete tag", name, id)
		}
	}
	var names []string
	for n := range living {
		names = append(names, n)
	}
	w.waitRunning(30*time.Second, names...)
}

// TestBatchedDeleteNeverTagsALivingVMsDroplet makes and deletes VMs of a
// shared-key Environment at once, in overlapping waves, and checks every
// one-off delete tag request: each droplet it named belonged to a VM whose
// deletion had been asked for before. The last wave stays; it must keep its
// droplets.
func TestBatchedDeleteNeverTagsALivingVMsDroplet(t *testing.T) {
	w := newWorld(t, worldOptions{})
	env := w.sharedKeyEnv("waves")
	owners := w.watchDropletNames()

	var mu sync.Mutex
	deleteAsked := map[string]time.Time{}
	const waves, perWave = 4, 8
	var previous []string
	for wave := range waves {
		names := w.createVMs(env, fmt.Sprintf("w%d", wave), perWave)
		// The previous wave goes while this one is being created.
		for _, n := range previous {
			mu.Lock()
			deleteAsked[n] = time.Now()
			mu.Unlock()
			w.deleteVMs(n)
		}
		w.waitRunning(2*time.Minute, names...)
		previous = names
	}
	w.eventually(2*time.Minute, "deleted waves gone", func() string {
		if n := len(w.liveIDs()); n != perWave {
			return fmt.Sprintf("%d droplets, want the last wave's %d", n, perWave)
		}
		return ""
	})

	tagged := w.deleteTagged()
	if len(tagged) == 0 {
		t.Error("no droplet went in a batched delete: the test proves nothing")
	}
	for id, at := range tagged {
		name, ok := owners.of(id)
		asked, deleted := deleteAsked[name]
		switch {
		case !ok:
			t.Errorf("droplet %d, named under a delete tag, belongs to no VM seen", id)
		case !deleted:
			t.Errorf("droplet %d of living VM %s was named under a delete tag", id, name)
		case at.Before(asked):
			t.Errorf("droplet %d of VM %s was named under a delete tag before its deletion was asked", id, name)
		}
	}
	last := w.dropletIDs(previous)
	w.expectOnly(last)
	t.Logf("%d droplets deleted in batches; requests:%s", len(tagged), counts(w.do.RequestCounts()))

	w.deleteVMs(previous...)
	w.deleteEnvAndWaitAllGone(env, 2*time.Minute)
}

// dropletNames maps droplet IDs to their names (the VMs' names) as
// DigitalOcean listed them while they lived.
type dropletNames struct {
	mu    sync.Mutex
	names map[int]string
}

func (w *world) watchDropletNames() *dropletNames {
	dn := &dropletNames{names: map[int]string{}}
	w.sample(50*time.Millisecond, func() {
		live := w.do.Droplets(w.token)
		dn.mu.Lock()
		defer dn.mu.Unlock()
		for _, d := range live {
			dn.names[d.ID] = d.Name
		}
	})
	return dn
}

func (dn *dropletNames) of(id int) (string, bool) {
	dn.mu.Lock()
	defer dn.mu.Unlock()
	name, ok := dn.names[id]
	return name, ok
}
