package gargantuasim

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
)

// A session's static VM, once tainted, is replaced when it is gone: v3.3
// deletes it itself; v3.0 leaves it until the provisioner deletes it, and
// counts it meanwhile.
func TestTaintedVMSetVMIsReplacedOnceGone(t *testing.T) {
	for v, gargantuaDeletes := range map[Version]bool{V3_0: false, V3_3: true} {
		t.Run(v.String(), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, v)
			w.run()
			made, err := w.g.CreateVMSet("set-t", w.env.Name, templateName, 2, "event-t")
			if err != nil {
				t.Fatal(err)
			}
			tainted, s, err := w.g.BindStaticVM("set-t", "alice")
			if err != nil {
				t.Fatal(err)
			}
			if err := w.g.EndSession(s); err != nil {
				t.Fatal(err)
			}
			if !gargantuaDeletes {
				stays(t, 3*time.Second, "v3.0 with a tainted VM", func() string {
					if vm := w.vm(tainted.Name); vm.DeletionTimestamp != nil {
						return "Gargantua deleted the tainted VM"
					}
					return setProblems(w, "set-t", 2, tainted.Name, true)
				})
				// The free VM going shows the tainted one still counts: one replacement, not two.
				free := made[0].Name
				if free == tainted.Name {
					free = made[1].Name
				}
				w.deleteVM(free)
				testutil.Eventually(t, 30*time.Second, "free VM gone", func() string { return w.gone(free) })
				testutil.Eventually(t, 10*time.Second, "free VM replaced", func() string {
					return setProblems(w, "set-t", 2, tainted.Name, true)
				})
				stays(t, time.Second, "after the replacement", func() string { return setProblems(w, "set-t", 2, tainted.Name, true) })
				// The provisioner deletes the tainted VM.
				w.deleteVM(tainted.Name)
			}
			testutil.Eventually(t, 30*time.Second, "tainted VM gone", func() string { return w.gone(tainted.Name) })
			testutil.Eventually(t, 30*time.Second, "set back to 2 untainted VMs", func() string {
				return setProblems(w, "set-t", 2, tainted.Name, false)
			})
		})
	}
}

// setProblems is "" if the set has count VMs, all with a status and
// untainted except the VM named tainted, which is there iff withTainted.
func setProblems(w *world, set string, count int, tainted string, withTainted bool) string {
	vms, err := w.g.VMSetVMs(set)
	if err != nil {
		return err.Error()
	}
	var names []string
	for _, vm := range vms {
		names = append(names, vm.Name)
		if vm.Name != tainted && (vm.Status.Tainted || vm.Status.Status != hfv1.VmStatusRFP) {
			return fmt.Sprintf("VM %s status %+v", vm.Name, vm.Status)
		}
	}
	if len(vms) != count || slices.Contains(names, tainted) != withTainted {
		return fmt.Sprintf("set has %v, want %d VMs, tainted %s among them: %v", names, count, tainted, withTainted)
	}
	return ""
}

// v3.3 empties a deleting VM's finalizers, a provisioner's included; v3.0
// leaves them.
func TestDeletingVMFinalizers(t *testing.T) {
	for v, strips := range map[Version]bool{V3_0: false, V3_3: true} {
		t.Run(v.String(), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, v)
			w.run()
			s, err := w.g.StartSession("alice", w.env, templateName)
			if err != nil {
				t.Fatal(err)
			}
			name := s.VMs[0]
			w.addFinalizer(name)
			w.deleteVM(name)
			if strips {
				testutil.Eventually(t, 5*time.Second, "v3.3 strips "+keepFinalizer, func() string { return w.gone(name) })
				return
			}
			stays(t, 3*time.Second, "v3.0 with a deleting VM", func() string {
				if f := w.vm(name).Finalizers; !slices.Equal(f, []string{keepFinalizer}) {
					return fmt.Sprintf("finalizers %v", f)
				}
				return ""
			})
		})
	}
}

// Run returns once its context ends, and leaves no goroutine behind.
func TestRunStopsWithoutLeaks(t *testing.T) {
	w := newWorld(t, V3_3)
	before := loopGoroutines()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.g.Run(ctx) }()
	// Give the loops work, only they can do: delete a tainted VM set VM.
	if _, err := w.g.CreateVMSet("set-r", w.env.Name, templateName, 1, "event-r"); err != nil {
		t.Fatal(err)
	}
	vm, s, err := w.g.BindStaticVM("set-r", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.g.EndSession(s); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 30*time.Second, "tainted VM deleted by the running loops", func() string { return w.gone(vm.Name) })
	if len(loopGoroutines()) == 0 {
		t.Fatal("no loop goroutine seen while running: the leak check below would prove nothing")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return 10s after its context ended")
	}
	testutil.Eventually(t, 5*time.Second, "goroutines of Run gone", func() string {
		if left := loopGoroutines(); len(left) > len(before) {
			return strings.Join(left, "\n\n")
		}
		return ""
	})
}

// loopGoroutines are the stacks of goroutines Run starts, directly or through
// client-go's informer and work queue.
func loopGoroutines() []string {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	var found []string
	for _, stack := range strings.Split(string(buf), "\n\n") {
		for _, marker := range []string{"gargantuasim.(*Gargantua).", "k8s.io/client-go/tools/cache.", "k8s.io/client-go/util/workqueue."} {
			if strings.Contains(stack, marker) {
				found = append(found, stack)
				break
			}
		}
	}
	return found
}
