package e2e

import (
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/virtualmachine"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const errorStatus = virtualmachine.VMStatusErrorDuringProvisioning

// A config an edit makes invalid while a VM waits is reported failed only
// once its grace period passed.
func TestInvalidRegionFailsAfterGrace(t *testing.T) {
	const grace = 6 * time.Second
	w := newWorld(t, worldOptions{configErrorGrace: grace})
	env := w.envWithoutUbuntu("env")
	w.createVM("vm-1", env, "ubuntu")
	created := time.Now()
	w.mapUbuntu(env.Name, map[string]string{"size": "s-1vcpu-1gb", "region": "Mars 1"})

	w.consistently(grace-2*time.Second, "no error status within the grace period", func() string {
		if s := w.vm("vm-1").Status.Status; s == errorStatus {
			return "errorduringprovisioning already"
		}
		return ""
	})
	w.eventually(20*time.Second, "errorduringprovisioning after the grace period", w.statusIs("vm-1", errorStatus))
	if since := time.Since(created); since < grace {
		t.Errorf("failed after %s, within the grace of %s", since, grace)
	}
	w.eventually(10*time.Second, "the Event names the region key and the grace", func() string {
		if events := w.vmEvents("vm-1"); !hasEvent(events, `still invalid after 6s: config key "region"`) {
			return fmt.Sprintf("events %q", events)
		}
		return ""
	})

	// Fixed while the VM exists: provisioning resumes.
	w.mapUbuntu(env.Name, map[string]string{"size": "s-1vcpu-1gb"})
	w.waitRunning("vm-1")
	if !hasEvent(w.vmEvents("vm-1"), "ProvisioningResumed") {
		t.Errorf("VM events %q lack ProvisioningResumed", w.vmEvents("vm-1"))
	}
}

// An Environment fixed within the grace period never shows an error.
func TestFixWithinGraceNeverErrors(t *testing.T) {
	w := newWorld(t, worldOptions{configErrorGrace: 20 * time.Second})
	env := w.envWithoutUbuntu("env")

	seen := watchStatuses(t, w, "vm-1")
	w.createVM("vm-1", env, "ubuntu")
	w.mapUbuntu(env.Name, map[string]string{"size": "s-1vcpu-1gb", "region": "Mars 1"})
	w.eventually(15*time.Second, "Configured=False for the region", w.configuredFalseWith("vm-1", `config key "region"`))
	w.mapUbuntu(env.Name, map[string]string{"size": "s-1vcpu-1gb"})
	w.waitRunning("vm-1")
	if s := seen(); s[errorStatus] {
		t.Errorf("statuses seen %v include %s", s, errorStatus)
	}
}

// DigitalOcean's refusal of a create (here its droplet limit) fails the VM
// at once, and the Event names the limit.
func TestDropletLimitFails(t *testing.T) {
	w := newWorld(t, worldOptions{})
	const limited = "dop_v1_limited"
	env := w.limitedEnv(limited, 1)
	w.createVM("vm-1", env, "ubuntu")
	w.waitRunning("vm-1")
	w.createVM("vm-2", env, "ubuntu")
	w.eventually(30*time.Second, "vm-2 errorduringprovisioning", func() string {
		if s := w.vm("vm-2").Status.Status; s != errorStatus {
			return fmt.Sprintf("status %q", s)
		}
		return ""
	})
	// Events are sent after the status write, so this one may come a moment later.
	w.eventually(10*time.Second, "an Event on vm-2 naming the droplet limit", func() string {
		if events := w.vmEvents("vm-2"); !hasEvent(events, "droplet limit") {
			return fmt.Sprintf("events %q", events)
		}
		return ""
	})
	if n := len(w.do.Droplets(limited)); n != 1 {
		t.Errorf("%d droplets, want 1", n)
	}
}

// Room under the droplet limit goes to the VMs it refused, first refused
// first, as soon as one of the token's droplets is deleted: with refused
// creates otherwise sent again only after an hour, vm-2 runs once vm-1 is
// deleted, and vm-3, refused after it, waits. The refusal names the limit
// and the droplets held.
func TestDropletLimitRoomGoesToTheFirstRefused(t *testing.T) {
	w := newWorld(t, worldOptions{refusedCreatePause: time.Hour})
	const limited = "dop_v1_limited_line"
	env := w.limitedEnv(limited, 1)
	w.createVM("vm-1", env, "ubuntu")
	w.waitRunning("vm-1")
	for _, name := range []string{"vm-2", "vm-3"} {
		w.createVM(name, env, "ubuntu")
		w.eventually(30*time.Second, name+"'s create refused for the droplet limit", func() string {
			d, err := w.droplets.Get(w.ns, name, metav1.GetOptions{})
			if err != nil {
				return err.Error()
			}
			return expectCondition(d, v1alpha1.Created, "Rejected", "droplet limit 1 reached (1 held)")
		})
	}
	w.deleteVMWithin("vm-1", time.Minute)
	w.waitRunning("vm-2")
	d, err := w.droplets.Get(w.ns, "vm-3", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status.DropletID != 0 {
		t.Errorf("vm-3, refused after vm-2, got droplet %d before it", d.Status.DropletID)
	}
	if n := len(w.do.Droplets(limited)); n != 1 {
		t.Errorf("%d droplets, want 1", n)
	}
}

// limitedEnv is an Environment "env" whose token, in Secret "limited", is
// of an account allowed limit droplets.
func (w *world) limitedEnv(token string, limit int) *hfv1.Environment {
	w.t.Helper()
	w.do.AddAccount(token, fakedo.AccountOptions{DropletLimit: limit})
	if _, err := w.hf.Secrets.Create(gargantuasim.TokenSecret(w.ns, "limited", token)); err != nil {
		w.t.Fatal(err)
	}
	env := w.standardEnv("env")
	w.setSpecifics(env.Name, map[string]string{"region": "nyc1", "token-secret": "limited"})
	return env
}

// watchStatuses polls a VM's status every 50ms until the test ends and
// returns the set of statuses seen so far.
func watchStatuses(t *testing.T, w *world, name string) func() map[hfv1.VmStatus]bool {
	var mu sync.Mutex
	seen := map[hfv1.VmStatus]bool{}
	done := make(chan struct{})
	stopped := make(chan struct{})
	t.Cleanup(func() { close(done); <-stopped })
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if vm, err := w.hf.VMs.Get(w.ns, name, metav1.GetOptions{}); err == nil {
				mu.Lock()
				seen[vm.Status.Status] = true
				mu.Unlock()
			}
		}
	}()
	return func() map[hfv1.VmStatus]bool {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(seen)
	}
}
