package reliability

import (
	"fmt"
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestEventEndDeletesDropletsBeforeKeys ends 50 VMs with keys of their own
// (ssh_key_scope vm) that are still registered: DigitalOcean refuses every
// key delete while they run, so none is retired. It checks at the fake that
// no key delete is sent while the droplets' delete is held, that every key
// delete comes after the last droplet delete, that the VMs leave Kubernetes
// without waiting for their keys, and that every key is gone in the end: in
// one process, and with the controller SIGKILLed once the droplets are gone,
// while its first key delete is on its way, and a new one started.
func TestEventEndDeletesDropletsBeforeKeys(t *testing.T) {
	bin := buildController(t)
	for _, restart := range []bool{false, true} {
		t.Run(map[bool]string{false: "one-process", true: "restart-between"}[restart], func(t *testing.T) {
			// A budget ten times the usual: no request of the test waits for
			// room, so a key delete sent too early shows at once.
			limits := fakedo.RateLimits{PerMinute: 10 * ratePerWindow, Minute: rateWindow, PerHour: ratePerHour}
			r := newCrashRun(newWorld(t, worldOptions{noController: true, fake: fakedo.Options{RateLimits: limits}}), bin)
			r.app.RateLimits = digitalocean.LimiterOptions{Limits: []digitalocean.RateLimit{
				{Requests: limits.PerMinute, Window: limits.Minute}, {Requests: limits.PerHour, Window: time.Hour}}}
			env := r.standardEnv("keys")
			r.do.SetFaults(fakedo.Faults{Rules: map[string]fakedo.FaultRule{fakedo.RouteDeleteKey: {ErrorRate: 1, ErrorStatus: 503}}})
			names := r.createVMs(env, "end", 50)
			r.start()
			r.waitRunning(4*time.Minute, names...)
			if k := len(r.do.Keys(r.token)); k != len(names) {
				t.Fatalf("DigitalOcean holds %d keys while the VMs run, want %d (none retired)", k, len(names))
			}

			dropletDeletes := r.holdBeforeApply(fakedo.RouteDeleteDropletsByTag)
			r.deleteVMs(names...)
			// From here on the controller has seen every VM deleted (it deleted
			// their Droplets): no key is retired any more, so every key delete
			// is a deleted VM's.
			r.eventually(2*time.Minute, "every Droplet deleted", r.dropletsDeleting)
			mark := len(r.do.Requests())
			r.await(dropletDeletes, "the droplets' batched delete")
			// A key delete refused now would be retried; none may be sent at all.
			r.consistently(5*time.Second, "no key delete while the droplets' delete is held", func() string {
				return keyDeletesSince(r.do.Requests(), mark)
			})

			r.do.SetFaults(fakedo.Faults{})
			var keyDeletes *fakedo.Hold
			if restart {
				keyDeletes = r.holdBeforeApply(fakedo.RouteDeleteKey)
			}
			dropletDeletes.Release()
			r.eventually(3*time.Minute, "VMs and droplets gone, keys not waited for", func() string {
				vms, err := r.hf.VMs.List(r.ns, metav1.ListOptions{})
				if err != nil {
					return err.Error()
				}
				if d := len(r.do.Droplets(r.token)); d+len(vms.Items) > 0 {
					return fmt.Sprintf("%d droplets, %d VMs left", d, len(vms.Items))
				}
				return ""
			})
			if restart {
				r.await(keyDeletes, "the first key delete")
				r.kill()
				keyDeletes.Release()
				if k := len(r.do.Keys(r.token)); k != len(names) {
					t.Fatalf("DigitalOcean holds %d keys after the first process, want all %d for the second to delete", k, len(names))
				}
				r.start()
			}
			r.waitAllGone(3 * time.Minute)

			lastDroplet, firstKey := time.Time{}, time.Time{}
			for i, req := range r.do.Requests() {
				switch {
				case req.Pattern == fakedo.RouteDeleteDroplet || req.Pattern == fakedo.RouteDeleteDropletsByTag:
					if req.Time.After(lastDroplet) {
						lastDroplet = req.Time
					}
				case req.Pattern == fakedo.RouteDeleteKey && i >= mark:
					if firstKey.IsZero() || req.Time.Before(firstKey) {
						firstKey = req.Time
					}
				}
			}
			if !firstKey.After(lastDroplet) {
				t.Errorf("a key delete at %s came before the last droplet delete at %s: droplets must go first",
					firstKey.Format(time.StampMilli), lastDroplet.Format(time.StampMilli))
			}
		})
	}
}

// keyDeletesSince describes the key deletes among requests from index mark on, or "".
func keyDeletesSince(requests []fakedo.RequestRecord, mark int) string {
	n := 0
	for _, req := range requests[min(mark, len(requests)):] {
		if req.Pattern == fakedo.RouteDeleteKey {
			n++
		}
	}
	if n > 0 {
		return fmt.Sprintf("%d key deletes sent", n)
	}
	return ""
}

// dropletsDeleting says which of the world's Droplets is not being deleted, or "".
func (w *world) dropletsDeleting() string {
	list, err := w.drops.List(w.ns, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	for _, d := range list.Items {
		if d.DeletionTimestamp == nil {
			return "Droplet " + d.Name + " not deleted yet"
		}
	}
	return ""
}

// consistently fails the test as soon as cond returns a word within d.
func (w *world) consistently(d time.Duration, what string, cond func() string) {
	w.t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if got := cond(); got != "" {
			w.t.Fatalf("%s: %s", what, got)
		}
	}
}
