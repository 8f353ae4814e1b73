package reliability

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
)

// Every way a VM's droplet comes to be ends the same way: one delete that
// DigitalOcean accepts, and no request naming the droplet after it, from the
// reaper, a batch, the Droplet's cleanup or a pool member's.
func TestEachDropletGetsOneDelete(t *testing.T) {
	t.Run("single create", func(t *testing.T) {
		w := newWorld(t, worldOptions{})
		vms := w.createVMs(w.standardEnv("env"), "single", 3)
		w.waitRunning(2*time.Minute, vms...)
		w.deleteVMs(vms...)
		w.waitAllGone(2 * time.Minute)
		w.expectOneDeleteEach(3)
	})
	t.Run("multi-create", func(t *testing.T) {
		w := newWorld(t, worldOptions{})
		env := w.sharedKeyEnv("env")
		vms := w.createVMs(env, "multi", 3)
		w.waitRunning(2*time.Minute, vms...)
		w.deleteVMs(vms...)
		w.deleteEnvAndWaitAllGone(env, 2*time.Minute)
		w.expectOneDeleteEach(3)
	})
	t.Run("pool claim", func(t *testing.T) {
		w := newWorld(t, worldOptions{})
		env := w.poolEnv("env", 2, nil)
		w.startEvent("event", env)
		w.waitPoolReady(2*time.Minute, 2)
		vms := w.createVMs(env, "claim", 2)
		w.waitRunning(2*time.Minute, vms...)
		for _, vm := range vms {
			if !w.claimed(vm) {
				t.Fatalf("%s did not take a pool droplet", vm)
			}
		}
		w.drainAndDeleteAll("event", vms, 2*time.Minute)
		w.expectOneDeleteEach(2)
	})
	t.Run("adopted after a lost answer", func(t *testing.T) {
		w := newWorld(t, worldOptions{})
		w.do.SetFaults(fakedo.Faults{Rules: map[string]fakedo.FaultRule{fakedo.RouteCreateDroplets: {DropResponseAfterApply: 1}}})
		vms := w.createVMs(w.standardEnv("env"), "adopted", 3)
		w.waitRunning(2*time.Minute, vms...)
		w.do.SetFaults(fakedo.Faults{})
		w.deleteVMs(vms...)
		w.waitAllGone(2 * time.Minute)
		w.expectOneDeleteEach(3)
	})
}

// expectOneDeleteEach fails the test unless at least n droplets were
// deleted, each by exactly one request, and no delete or delete-tagging
// request named a droplet DigitalOcean had deleted already.
func (w *world) expectOneDeleteEach(n int) {
	w.t.Helper()
	deletes := map[int]int{}
	var late []string
	for _, r := range w.do.DeleteRecords(w.token) {
		for _, id := range r.Deleted {
			deletes[id]++
		}
		for _, id := range r.Gone {
			late = append(late, fmt.Sprintf("%s %s (%d) named droplet %d after its delete", r.Pattern, r.Tag, r.Status, id))
		}
	}
	for _, r := range w.do.TagResourcesRecords(w.token) {
		if !digitalocean.IsDeleteTag(r.Tag) {
			continue
		}
		for _, id := range r.Gone {
			late = append(late, fmt.Sprintf("tagging for delete (%s, %d) named droplet %d after its delete", r.Tag, r.Status, id))
		}
	}
	if len(late) > 0 {
		w.t.Errorf("%d delete-side requests after DigitalOcean confirmed a delete:\n%s", len(late), strings.Join(late, "\n"))
	}
	if len(deletes) < n {
		w.t.Errorf("%d droplets deleted, want at least %d", len(deletes), n)
	}
	for id, c := range deletes {
		if c != 1 {
			w.t.Errorf("droplet %d deleted by %d requests", id, c)
		}
	}
}
