package gargantuasim

import (
	"context"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{CRDs: testenv.HobbyFarmCRDs()})
}

const (
	templateName = "ubuntu"
	// keepFinalizer stands for a provisioner's finalizer on a VM.
	keepFinalizer = "example.com/keep"
)

// world is one test's namespace with a DigitalOcean Environment and a
// template, and a Gargantua of one version acting there.
type world struct {
	t   *testing.T
	g   *Gargantua
	env *hfv1.Environment
}

func newWorld(t *testing.T, v Version) *world {
	t.Helper()
	cluster := testenv.Require(t)
	ns := cluster.NewNamespace(t)
	g, err := New(cluster.Config(), ns, v)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, g: g}
	// Runs before the namespace's deletion (cleanups run last first): without
	// Gargantua's loops nobody would release the VMs, and the namespace with them.
	t.Cleanup(w.releaseAllVMs)
	if _, err := g.Clients.Templates.Create(Template(ns, templateName, "ubuntu-22-04-x64",
		map[string]string{"ssh_username": "root"})); err != nil {
		t.Fatal(err)
	}
	env, err := g.Clients.Envs.Create(Environment(ns, "do-env", map[string]string{"region": "nyc3"},
		map[string]map[string]string{templateName: {"size": "s-1vcpu-1gb"}}))
	if err != nil {
		t.Fatal(err)
	}
	w.env = env
	return w
}

func (w *world) releaseAllVMs() {
	vms, err := w.g.Clients.VMs.List(w.g.Namespace, metav1.ListOptions{})
	if err != nil {
		w.t.Error(err)
		return
	}
	for _, vm := range vms.Items {
		w.setFinalizers(vm.Name, func([]string) []string { return nil })
	}
}

// run runs the Gargantua's loops until the test ends, and fails the test if
// they do not stop then.
func (w *world) run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.g.Run(ctx) }()
	w.t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				w.t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			w.t.Error("Run did not return 10s after its context ended")
		}
	})
}

func (w *world) vm(name string) *hfv1.VirtualMachine {
	w.t.Helper()
	vm, err := w.g.Clients.VMs.Get(w.g.Namespace, name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return vm
}

// gone is "" once the VM no longer exists, else why not (for Eventually).
func (w *world) gone(name string) string {
	_, err := w.g.Clients.VMs.Get(w.g.Namespace, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return ""
	case err != nil:
		return err.Error()
	}
	return "VM " + name + " still exists"
}

// deleteVM deletes a VM as a provisioner or an admin would.
func (w *world) deleteVM(name string) {
	w.t.Helper()
	if err := w.g.Clients.VMs.Delete(w.g.Namespace, name, nil); err != nil {
		w.t.Fatal(err)
	}
}

// addFinalizer puts a provisioner's finalizer on a VM.
func (w *world) addFinalizer(name string) {
	w.t.Helper()
	w.setFinalizers(name, func(f []string) []string { return append(f, keepFinalizer) })
}

func (w *world) setFinalizers(name string, change func([]string) []string) {
	w.t.Helper()
	_, err := retryWrite(w.g.Clients.VMs, w.g.Namespace, name, false,
		func(vm *hfv1.VirtualMachine) { vm.Finalizers = change(vm.Finalizers) })
	if err != nil && !apierrors.IsNotFound(err) {
		w.t.Fatal(err)
	}
}

// stays fails the test if cond reports anything during d.
func stays(t *testing.T, d time.Duration, what string, cond func() string) {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if got := cond(); got != "" {
			t.Fatalf("%s: %s", what, got)
		}
	}
}
