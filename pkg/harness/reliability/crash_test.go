package reliability

import (
	"fmt"
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/virtualmachine"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCrashAtEachCreatePoint SIGKILLs the controller process at each point of
// a VM's create path, holding the fake's requests so the kill lands exactly
// there, then starts a new process. Whatever the first one left half done,
// the VM must end running with one droplet and one key in DigitalOcean, the
// fake must have applied exactly one create of each, and deleting the VM must
// leave nothing.
func TestCrashAtEachCreatePoint(t *testing.T) {
	bin := buildController(t)
	for _, point := range []struct {
		name string
		// reach starts the first controller and returns once it is at the
		// point, after checking that it is.
		reach func(r *crashRun)
		// restart starts the second controller; r.start when nil.
		restart func(r *crashRun)
	}{
		{name: "after-secret-before-key-post", reach: func(r *crashRun) {
			post := r.holdBeforeApply(fakedo.RouteCreateKey)
			r.start()
			r.await(post, "the key POST")
			vm := r.vm()
			if _, err := r.hf.Secrets.Get(r.ns, virtualmachine.SSHSecretName(vm), metav1.GetOptions{}); err != nil {
				r.t.Fatalf("key-pair Secret at the key POST: %v", err)
			}
			r.expectDO(0, 0)
		}},
		{name: "after-key-post-before-its-answer", reach: crashAfterKeyPost},
		{name: "after-key-post-before-its-answer-adopted-mid-sweep", reach: crashAfterKeyPost, restart: func(r *crashRun) {
			// The new process's first orphan sweep reads the Keys, then lists
			// DigitalOcean's keys. Here the Key adopts its key in between
			// (the fake holds the adoption's lookup until the listing
			// arrives): the sweep must still see that the key has an owner.
			adopt := r.holdBeforeApply(fakedo.RouteGetKey)
			list := r.holdBeforeApply(fakedo.RouteListKeys)
			r.start()
			r.await(list, "the orphan sweep's key listing")
			adopt.Release()
			testutil.Eventually(r.t, time.Minute, "the Key adopting its key", func() string {
				// Adopted, and perhaps retired at once: its droplet exists.
				if k := r.keyObject(); k.Status.KeyID == 0 && k.Status.State != v1alpha1.KeyStateRetired {
					return "no ID yet"
				}
				return ""
			})
			list.Release()
		}},
		{name: "after-droplet-post-before-status-write", reach: func(r *crashRun) {
			post := r.holdAfterApply(fakedo.RouteCreateDroplets)
			r.start()
			r.await(post, "the droplet POST's answer")
			r.expectDO(1, 1)
			if d := r.dropletObject(); d.Status.DropletID != 0 {
				r.t.Fatalf("Droplet has ID %d although its create was not answered", d.Status.DropletID)
			}
		}},
		{name: "after-status-write-before-running", reach: func(r *crashRun) {
			post := r.holdAfterApply(fakedo.RouteCreateDroplets)
			r.start()
			r.await(post, "the droplet POST's answer")
			r.expectDO(1, 1)
			// The droplet stays "new" until the kill, so the VM cannot get
			// past provisioned; every other request is answered as usual.
			id := r.do.Droplets(r.token)[0].ID
			if err := r.do.SetDropletStatus(r.token, id, "new"); err != nil {
				r.t.Fatal(err)
			}
			post.Release()
			testutil.Eventually(r.t, time.Minute, "the droplet's ID in the Droplet status", func() string {
				if got := r.dropletObject().Status.DropletID; got != id {
					return fmt.Sprintf("ID %d", got)
				}
				return ""
			})
			if vm := r.vm(); vm.Status.Status == hfv1.VmStatusRunning {
				r.t.Fatalf("VM is running although its droplet is new")
			}
		}, restart: func(r *crashRun) {
			id := r.do.Droplets(r.token)[0].ID
			if err := r.do.SetDropletStatus(r.token, id, "active"); err != nil {
				r.t.Fatal(err)
			}
			r.start()
		}},
	} {
		t.Run(point.name, func(t *testing.T) {
			r := newCrashRun(newWorld(t, worldOptions{noController: true}), bin)
			r.createVMs(r.standardEnv("crash"), "crash", 1)

			point.reach(r)
			r.kill()
			for _, h := range r.holds {
				h.Release()
			}
			if point.restart != nil {
				point.restart(r)
			} else {
				r.start()
			}

			r.waitRunning(2*time.Minute, crashVM)
			// Its key is deleted in DigitalOcean once its droplet exists.
			testutil.Eventually(r.t, time.Minute, "the VM's key retired", func() string {
				k, keys := r.keyObject(), r.do.Keys(r.token)
				if len(keys) != 0 || k.Status.KeyID != 0 || k.Status.State != v1alpha1.KeyStateRetired {
					return fmt.Sprintf("%d keys at DigitalOcean; Key ID %d, state %q", len(keys), k.Status.KeyID, k.Status.State)
				}
				return ""
			})
			drops := r.do.Droplets(r.token)
			if len(drops) != 1 {
				t.Fatalf("DigitalOcean holds %d droplets for one VM, want 1", len(drops))
			}
			if id := r.dropletObject().Status.DropletID; id != drops[0].ID {
				t.Errorf("Droplet status has ID %d, DigitalOcean's droplet is %d", id, drops[0].ID)
			}

			r.deleteVMs(crashVM)
			r.waitAllGone(2 * time.Minute)
			// A duplicate made and deleted again would not show in a listing.
			if d, k := r.appliedCreates(); d != 1 || k != 1 {
				t.Errorf("DigitalOcean applied %d droplet creates and %d key creates, want 1 and 1; requests:%s", d, k, counts(r.do.RequestCounts()))
			}
		})
	}
}

// crashAfterKeyPost stops the controller once DigitalOcean has made the
// key and before the controller hears of it.
func crashAfterKeyPost(r *crashRun) {
	post := r.holdAfterApply(fakedo.RouteCreateKey)
	r.start()
	r.await(post, "the key POST's answer")
	r.expectDO(0, 1)
	if k := r.keyObject(); k.Status.KeyID != 0 {
		r.t.Fatalf("Key has ID %d although its create was not answered", k.Status.KeyID)
	}
}

// crashVM is the one VM of a crash run (createVMs' name for "crash", 1).
const crashVM = "crash-00"

// crashRun is one world whose controller runs as a process, started and
// SIGKILLed by the test.
type crashRun struct {
	*world
	bin   string
	logs  *testutil.SyncBuffer // every process's output, in order
	proc  *controllerProcess
	runs  int
	holds []*fakedo.Hold
}

// newCrashRun is a crash run of bin in w; a failed test shows every
// process's output.
func newCrashRun(w *world, bin string) *crashRun {
	r := &crashRun{world: w, bin: bin, logs: &testutil.SyncBuffer{}}
	w.t.Cleanup(func() {
		if w.t.Failed() {
			w.t.Logf("controller logs:\n%s", r.logs.String())
		}
	})
	return r
}

func (r *crashRun) holdBeforeApply(pattern string) *fakedo.Hold {
	h := r.do.HoldBeforeApply(pattern)
	r.holds = append(r.holds, h)
	r.t.Cleanup(h.Release)
	return h
}

func (r *crashRun) holdAfterApply(pattern string) *fakedo.Hold {
	h := r.do.HoldAfterApply(pattern)
	r.holds = append(r.holds, h)
	r.t.Cleanup(h.Release)
	return h
}

// start runs a new controller process with the world's settings.
func (r *crashRun) start() {
	r.t.Helper()
	r.runs++
	fmt.Fprintf(r.logs, "----- controller process %d -----\n", r.runs)
	r.proc = startControllerProcess(r.t, r.bin, r.world, r.logs)
}

func (r *crashRun) kill() {
	r.t.Helper()
	r.proc.kill()
	fmt.Fprintf(r.logs, "----- SIGKILLed -----\n")
}

// await returns once a request reaches h, failing if the controller exits first.
func (r *crashRun) await(h *fakedo.Hold, what string) {
	r.t.Helper()
	select {
	case <-h.Reached():
	case <-r.proc.exited:
		r.t.Fatalf("controller exited before %s: %v", what, r.proc.err)
	case <-time.After(2 * time.Minute):
		r.t.Fatalf("the controller did not reach %s within 2 minutes", what)
	}
}

// expectDO fails unless DigitalOcean holds exactly this many droplets and keys.
func (r *crashRun) expectDO(droplets, keys int) {
	r.t.Helper()
	if d, k := len(r.do.Droplets(r.token)), len(r.do.Keys(r.token)); d != droplets || k != keys {
		r.t.Fatalf("at the crash point DigitalOcean holds %d droplets and %d keys, want %d and %d", d, k, droplets, keys)
	}
}

func (r *crashRun) vm() *hfv1.VirtualMachine {
	r.t.Helper()
	vm, err := r.hf.VMs.Get(r.ns, crashVM, metav1.GetOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	return vm
}

// dropletObject and keyObject return the VM's Droplet and Key (named as the VM).
func (r *crashRun) dropletObject() *v1alpha1.Droplet {
	r.t.Helper()
	d, err := r.drops.Get(r.ns, crashVM, metav1.GetOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	return d
}

func (r *crashRun) keyObject() *v1alpha1.Key {
	r.t.Helper()
	k, err := r.keys.Get(r.ns, crashVM, metav1.GetOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	return k
}

// buildController builds the controller binary into the test's temp dir.
func buildController(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hf-provisioner-digitalocean")
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(build.Default.GOROOT, "bin", "go")
	}
	cmd := exec.Command(gobin, "build", "-o", bin, "github.com/hobbyfarm/hf-provisioner-digitalocean")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// controllerProcess is the controller binary running for one world.
type controllerProcess struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // Wait's error, once exited is closed
}

// startControllerProcess runs bin with w's controller settings and kills it
// when the test ends.
func startControllerProcess(t *testing.T, bin string, w *world, logs *testutil.SyncBuffer) *controllerProcess {
	t.Helper()
	o := w.app
	limits := make([]string, len(o.RateLimits.Limits))
	for i, l := range o.RateLimits.Limits {
		limits[i] = fmt.Sprintf("%d/%s", l.Requests, l.Window)
	}
	cmd := exec.Command(bin,
		"--kubeconfig="+w.kubeconfig,
		"--namespace="+o.Namespace,
		"--do-api-url="+o.APIURL,
		"--install-crds=false",
		"--metrics-addr=",
		fmt.Sprintf("--workers=%d", o.Workers),
		"--boot-resync="+o.BootResync.String(),
		"--active-resync="+o.ActiveResync.String(),
		fmt.Sprintf("--ssh-port=%d", o.SSHPort),
		"--rate-limits="+strings.Join(limits, ","),
		// The sweep must not tidy away a duplicate droplet before it is
		// counted. (Keys have no age at DigitalOcean: no grace spares them.)
		"--sweep-interval=1h", "--orphan-grace=1h",
	)
	if o.KeyDeleteDelay > 0 {
		cmd.Args = append(cmd.Args, "--key-delete-delay="+o.KeyDeleteDelay.String())
	}
	if o.WarmPoolSurplusIdle > 0 {
		cmd.Args = append(cmd.Args, "--warm-pool-surplus-idle="+o.WarmPoolSurplusIdle.String())
	}
	cmd.Env = envWithout("KUBECONFIG=", "HF_", "DIGITALOCEAN_")
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &controllerProcess{cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(p.kill)
	return p
}

// kill SIGKILLs the process, so it gets no chance to finish anything, and
// waits until it is gone.
func (p *controllerProcess) kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// envWithout is this process's environment without variables starting with
// any of prefixes, so the user's settings never reach the controller.
func envWithout(prefixes ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		keep := true
		for _, p := range prefixes {
			keep = keep && !strings.HasPrefix(kv, p)
		}
		if keep {
			env = append(env, kv)
		}
	}
	return env
}
