package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// gargantua runs a simulated Gargantua of version v in w's namespace until
// the test ends, after configure.
func (w *world) gargantua(v gargantuasim.Version, configure ...func(*gargantuasim.Gargantua)) *gargantuasim.Gargantua {
	w.t.Helper()
	g, err := gargantuasim.New(testenv.Require(w.t).Config(), w.ns, v)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, c := range configure {
		c(g)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	w.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && ctx.Err() == nil {
			w.t.Errorf("simulated Gargantua: %v", err)
		}
	})
	return g
}

// setVMs lists a VM set's VMs that are not being deleted.
func (w *world) setVMs(g *gargantuasim.Gargantua, set string) []hfv1.VirtualMachine {
	w.t.Helper()
	all, err := g.VMSetVMs(set)
	if err != nil {
		w.t.Fatal(err)
	}
	var live []hfv1.VirtualMachine
	for _, vm := range all {
		if vm.DeletionTimestamp == nil {
			live = append(live, vm)
		}
	}
	return live
}

// allRunning is "" when want VMs of the set run untainted, each on a droplet
// of its own that the fake has.
func (w *world) allRunning(g *gargantuasim.Gargantua, set string, want int) string {
	vms := w.setVMs(g, set)
	if len(vms) != want {
		return fmt.Sprintf("%d VMs, want %d", len(vms), want)
	}
	for _, vm := range vms {
		if vm.Status.Status != hfv1.VmStatusRunning || vm.Status.Tainted {
			return fmt.Sprintf("%s is %q (tainted %v)", vm.Name, vm.Status.Status, vm.Status.Tainted)
		}
	}
	if n := len(w.do.Droplets(testToken)); n != want {
		return fmt.Sprintf("%d droplets, want %d", n, want)
	}
	return ""
}

// empty is "" once nothing of the provisioner's is left: no droplet or key
// in DigitalOcean, no Droplet, Key or token Secret in the namespace.
func (w *world) empty() string {
	if n := len(w.do.Droplets(testToken)); n > 0 {
		return fmt.Sprintf("%d droplets left", n)
	}
	if n := len(w.do.Keys(testToken)); n > 0 {
		return fmt.Sprintf("%d keys left", n)
	}
	if l, err := w.droplets.List(w.ns, metav1.ListOptions{}); err != nil || len(l.Items) > 0 {
		return fmt.Sprintf("Droplet objects left: %d (%v)", len(l.Items), err)
	}
	if l, err := w.keys.List(w.ns, metav1.ListOptions{}); err != nil || len(l.Items) > 0 {
		return fmt.Sprintf("Key objects left: %d (%v)", len(l.Items), err)
	}
	secrets, err := w.kube.CoreV1().Secrets(w.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "hobbyfarm.io/provisioner=digitalocean"})
	if err != nil || len(secrets.Items) > 0 {
		return fmt.Sprintf("Secrets of ours left: %d (%v)", len(secrets.Items), err)
	}
	return ""
}

// Gargantua v3.0.1-rc0 makes a scheduled event's VMs in advance. They run
// like claim VMs, keep their droplet when a user is bound to one, go with
// their droplet when the session ends (v3.0 itself never deletes a tainted
// VM), and all go when the event ends.
func TestStaticVMsOfAScheduledEvent(t *testing.T) {
	w := newWorld(t, worldOptions{})
	g := w.gargantua(gargantuasim.V3_0)
	env := w.standardEnv("env")
	if _, err := g.CreateVMSet("event-set", env.Name, "ubuntu", 5, "event-1"); err != nil {
		t.Fatal(err)
	}
	w.eventually(60*time.Second, "5 static VMs running", func() string { return w.allRunning(g, "event-set", 5) })

	vm, session, err := g.BindStaticVM("event-set", "alice")
	if err != nil {
		t.Fatal(err)
	}
	before, dropletBefore := w.vm(vm.Name), w.droplet(vm.Name).Status.DropletID
	w.consistently(3*time.Second, "the bound VM keeps its droplet and Gargantua's writes", func() string {
		now := w.vm(vm.Name)
		switch {
		case now.Status.Status != hfv1.VmStatusRunning || !now.Status.Allocated || now.Labels["bound"] != "true" || now.Spec.UserId != "alice":
			return fmt.Sprintf("status %q allocated %v bound %q user %q", now.Status.Status, now.Status.Allocated, now.Labels["bound"], now.Spec.UserId)
		case now.Spec.SecretName != before.Spec.SecretName || now.Status.PublicIP != before.Status.PublicIP:
			return fmt.Sprintf("secret %q ip %q, were %q %q", now.Spec.SecretName, now.Status.PublicIP, before.Spec.SecretName, before.Status.PublicIP)
		case w.droplet(vm.Name).Status.DropletID != dropletBefore:
			return "droplet replaced"
		case len(w.do.Droplets(testToken)) != 5:
			return fmt.Sprintf("%d droplets", len(w.do.Droplets(testToken)))
		case !slices.Contains(now.Finalizers, "finalizer.hobbyfarm.io/vmset"):
			return fmt.Sprintf("Gargantua's finalizer is gone: %v", now.Finalizers)
		}
		return ""
	})
	w.loginWithSecret(vm.Name)

	if err := g.EndSession(session); err != nil {
		t.Fatal(err)
	}
	w.eventually(10*time.Second, "the tainted VM and its droplet gone", func() string {
		if _, err := w.hf.VMs.Get(w.ns, vm.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Sprintf("VM still there (%v)", err)
		}
		for _, d := range w.do.Droplets(testToken) {
			if d.ID == dropletBefore {
				return "its droplet still exists"
			}
		}
		return ""
	})
	w.eventually(60*time.Second, "the replacement runs", func() string { return w.allRunning(g, "event-set", 5) })

	if err := g.DeleteVMSet("event-set"); err != nil {
		t.Fatal(err)
	}
	w.eventually(60*time.Second, "the event's VMs, droplets and keys gone", func() string {
		if vms := w.setVMs(g, "event-set"); len(vms) > 0 {
			return fmt.Sprintf("%d VMs left", len(vms))
		}
		return w.empty()
	})
}

// At the end of a scheduled event on Gargantua v3.0.1-rc0, whose VM set
// controller removes its finalizer with a GET and an UPDATE it never
// retries, every VM is gone: the provisioner writes nothing to a deleting VM
// until Gargantua's finalizer is off, so that UPDATE never conflicts. The
// simulated Gargantua waits between the two calls, which makes a write of
// ours land in between on every run if one is sent.
func TestEventEndLeavesNoVMTerminatingOnV30(t *testing.T) {
	w := newWorld(t, worldOptions{})
	g := w.gargantua(gargantuasim.V3_0, func(g *gargantuasim.Gargantua) { g.VMSetFinalizerPause = 8 * time.Second })
	env := w.standardEnv("env")
	if _, err := g.CreateVMSet("event-set", env.Name, "ubuntu", 2, "event-1"); err != nil {
		t.Fatal(err)
	}
	w.eventually(60*time.Second, "2 static VMs running", func() string { return w.allRunning(g, "event-set", 2) })
	var names []string
	for _, vm := range w.setVMs(g, "event-set") {
		names = append(names, vm.Name)
	}

	if err := g.DeleteVMSet("event-set"); err != nil {
		t.Fatal(err)
	}
	w.eventually(60*time.Second, "the event's VMs gone, and their droplets and keys", func() string {
		for _, name := range names {
			vm, err := w.hf.VMs.Get(w.ns, name, metav1.GetOptions{})
			switch {
			case err == nil:
				return fmt.Sprintf("VM %s still there, finalizers %v", name, vm.Finalizers)
			case !apierrors.IsNotFound(err):
				return fmt.Sprintf("VM %s: %v", name, err)
			}
		}
		return w.empty()
	})
	for _, name := range names {
		if hasEvent(w.vmEvents(name), "GargantuaFinalizerRemains") {
			t.Errorf("VM %s: our finalizer went without waiting for Gargantua's: %q", name, w.vmEvents(name))
		}
	}
}

// Gargantua v3.1 and later delete tainted VMs themselves and strip every
// finalizer of a deleting VM, ours included. The droplet and key are still
// deleted, with either form of token, and nothing is left stuck.
func TestCleanupWithStrippedFinalizers(t *testing.T) {
	const activeResync = 10 * time.Second
	for _, c := range []struct {
		name  string
		token map[string]string
		flood bool
	}{
		{"token-secret", map[string]string{"token-secret": tokenSecret}, false},
		{"token", map[string]string{"token": testToken}, false},
		{"token during a flood of creates", map[string]string{"token": testToken}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Tainted VMs are left to Gargantua here, to prove its own path.
			w := newWorld(t, worldOptions{activeResync: activeResync, keepTainted: true})
			g := w.gargantua(gargantuasim.V3_3)
			env := w.standardEnv("env")
			specifics := map[string]string{"region": "nyc1"}
			for k, v := range c.token {
				specifics[k] = v
			}
			w.setSpecifics(env.Name, specifics)
			env, _ = w.hf.Envs.Get(w.ns, env.Name, metav1.GetOptions{})

			var sessions []*gargantuasim.Session
			for i := range 10 {
				s, err := g.StartSession(fmt.Sprintf("user-%d", i), env, "ubuntu")
				if err != nil {
					t.Fatal(err)
				}
				sessions = append(sessions, s)
				if c.flood && i%2 == 1 {
					// Ended while creates are still under way.
					if err := g.EndSession(sessions[i-1]); err != nil {
						t.Fatal(err)
					}
				}
			}
			if !c.flood {
				var names []string
				for _, s := range sessions {
					names = append(names, s.VMs...)
				}
				w.waitRunning(names...)
			}
			// DigitalOcean failing deletes meanwhile makes sure that the VMs,
			// and with them what they own, are gone before anything could be
			// deleted there: the cleanups must do without the VM.
			w.do.SetFaults(failingDeletes)
			for i, s := range sessions {
				if c.flood && i%2 == 0 {
					continue
				}
				if err := g.EndSession(s); err != nil {
					t.Fatal(err)
				}
			}
			w.eventually(30*time.Second, "VMs gone with their finalizers stripped", func() string {
				if l, err := w.hf.VMs.List(w.ns, metav1.ListOptions{}); err != nil || len(l.Items) > 0 {
					return fmt.Sprintf("%d VMs left (%v)", len(l.Items), err)
				}
				return ""
			})
			w.do.SetFaults(fakedo.Faults{})
			ended := time.Now()
			w.eventually(activeResync+10*time.Second, "all gone", w.empty)
			t.Logf("everything gone %s after DigitalOcean accepted deletes again", time.Since(ended).Round(time.Millisecond))
		})
	}
}

// failingDeletes makes DigitalOcean answer every delete with a 500.
var failingDeletes = fakedo.Faults{Rules: map[string]fakedo.FaultRule{
	fakedo.RouteDeleteDroplet:       {ErrorRate: 1},
	fakedo.RouteDeleteDropletsByTag: {ErrorRate: 1},
	fakedo.RouteDeleteKey:           {ErrorRate: 1},
}}

// An operator who strips the finalizers of a deleting VM by hand gets the
// same: the droplet and key are deleted all the same.
func TestFinalizersStrippedByHand(t *testing.T) {
	w := newWorld(t, worldOptions{activeResync: 10 * time.Second})
	env := w.standardEnv("env")
	w.setSpecifics(env.Name, map[string]string{"region": "nyc1", "token": testToken})
	env, _ = w.hf.Envs.Get(w.ns, env.Name, metav1.GetOptions{})
	w.createVM("vm-1", env, "ubuntu")
	w.waitRunning("vm-1")
	w.do.SetFaults(failingDeletes)
	if err := w.hf.VMs.Delete(w.ns, "vm-1", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hf.VMs.Patch(w.ns, "vm-1", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	w.eventually(10*time.Second, "the VM gone", func() string {
		if _, err := w.hf.VMs.Get(w.ns, "vm-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Sprintf("still there (%v)", err)
		}
		return ""
	})
	w.do.SetFaults(fakedo.Faults{})
	w.eventually(20*time.Second, "all gone", w.empty)
}
