package playground

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRunCreatesVMsPrintsWorkingSSHAndCleansUp(t *testing.T) {
	testenv.SkipUnlessFull(t) // Run starts a control plane
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var out bytes.Buffer
	var res Result
	ready := false
	err := Run(ctx, Options{
		VMs: 2, BootDelay: 300 * time.Millisecond, BaseDir: t.TempDir(), Result: &res,
		// Cancelling here is what Ctrl-C does once the user has seen the hints.
		OnReady: func() { ready = true; cancel() },
	}, io.MultiWriter(&out, testutil.LogWriter(t)))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !ready {
		t.Fatal("Run returned without calling OnReady")
	}

	text := out.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^pg-vm-1  running  127\.\d+\.\d+\.\d+$`),
		regexp.MustCompile(`(?m)^pg-vm-2  running  127\.\d+\.\d+\.\d+$`),
		regexp.MustCompile(`(?m)^export KUBECONFIG=/\S+$`),
		regexp.MustCompile(`(?m)^kubectl get virtualmachines,droplets,keys -n hobbyfarm$`),
		regexp.MustCompile(`(?m)^ssh -i /\S+\.key -p \d+ -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null root@127\.\d+\.\d+\.\d+ hostname$`),
		regexp.MustCompile(`(?m)^verified: ssh login works`),
		regexp.MustCompile(`(?m)^no VMs left; fake DigitalOcean holds 0 droplets and 0 keys`),
	} {
		if !want.MatchString(text) {
			t.Errorf("output lacks %s", want)
		}
	}
	if res.DropletsLeft != 0 || res.KeysLeft != 0 {
		t.Errorf("fake still holds %d droplets and %d keys", res.DropletsLeft, res.KeysLeft)
	}
	if _, err := os.Stat(res.Dir); !os.IsNotExist(err) {
		t.Errorf("temp dir %s not removed: %v", res.Dir, err)
	}
}

// TestStaticPathSessionsAndTeardown plays Gargantua v3.0: a VM set's static
// VMs run, a session binds one, ending it gets the VM deleted and a
// replacement running, and Ctrl-C leaves nothing, a VM made by hand included.
func TestStaticPathSessionsAndTeardown(t *testing.T) {
	testenv.SkipUnlessFull(t) // Run starts a control plane
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	statePath := filepath.Join(t.TempDir(), "state.json")
	var out testutil.SyncBuffer
	var res Result
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{
			VMs: 2, BootDelay: 300 * time.Millisecond, BaseDir: t.TempDir(), Result: &res,
			Gargantua: gargantuasim.V3_0, StatePath: statePath,
			OnReady: func() { close(ready) },
		}, io.MultiWriter(&out, testutil.LogWriter(t)))
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("Run returned before ready: %v", err)
	}
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-done
	}
	defer func() { _ = stop() }()

	state, err := ReadState(statePath)
	if err != nil {
		t.Fatalf("state file: %v", err)
	}
	if state.VMSet != VMSetName || state.Gargantua != gargantuasim.V3_0 || state.PID != os.Getpid() {
		t.Fatalf("state = %+v", state)
	}
	cfg, err := state.restConfig()
	if err != nil {
		t.Fatal(err)
	}
	g, err := gargantuasim.New(cfg, Namespace, gargantuasim.V3_0)
	if err != nil {
		t.Fatal(err)
	}
	setVMs := func() map[string]hfv1.VirtualMachine {
		t.Helper()
		vms, err := g.VMSetVMs(VMSetName)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]hfv1.VirtualMachine{}
		for _, vm := range vms {
			m[vm.Name] = vm
		}
		return m
	}
	before := setVMs()
	if len(before) != 2 {
		t.Fatalf("VM set has %d VMs, want 2", len(before))
	}
	for name, vm := range before {
		if vm.Status.Status != hfv1.VmStatusRunning || vm.Labels["bound"] != "false" {
			t.Errorf("VM %s: status %q, bound %q; want running and free", name, vm.Status.Status, vm.Labels["bound"])
		}
	}

	var startOut bytes.Buffer
	info, err := StartSession(ctx, statePath, "alice", io.MultiWriter(&startOut, testutil.LogWriter(t)))
	if err != nil {
		t.Fatalf("session start: %v", err)
	}
	if _, ok := before[info.VM]; !ok {
		t.Fatalf("session bound %s, not one of the set's VMs", info.VM)
	}
	vm, err := g.Clients.VMs.Get(Namespace, info.VM, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if vm.Labels["bound"] != "true" || vm.Spec.UserId != "alice" || vm.Spec.VirtualMachineClaimId != info.Claim || !vm.Status.Allocated {
		t.Errorf("bound VM %s: label bound %q, user %q, claim %q (want %q), allocated %v",
			vm.Name, vm.Labels["bound"], vm.Spec.UserId, vm.Spec.VirtualMachineClaimId, info.Claim, vm.Status.Allocated)
	}
	sshLine := regexp.MustCompile(`(?m)^ssh -i /\S+\.key -p \d+ -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null root@` +
		regexp.QuoteMeta(info.IP) + ` hostname$`)
	if info.IP == "" || !sshLine.MatchString(startOut.String()) {
		t.Errorf("session start printed no ssh command to IP %q:\n%s", info.IP, startOut.String())
	}

	// Ended by its session's name, as Gargantua's session controller would.
	if err := EndSession(ctx, statePath, info.Name, testutil.LogWriter(t)); err != nil {
		t.Fatalf("session end: %v", err)
	}
	after := setVMs()
	if _, ok := after[info.VM]; ok {
		t.Errorf("VM %s still exists after its session ended", info.VM)
	}
	replacements := 0
	for name, vm := range after {
		if _, old := before[name]; !old {
			replacements++
			if vm.Status.Status != hfv1.VmStatusRunning || vm.Labels["bound"] != "false" {
				t.Errorf("replacement %s: status %q, bound %q", name, vm.Status.Status, vm.Labels["bound"])
			}
		}
	}
	if len(after) != 2 || replacements != 1 {
		t.Errorf("VM set has %d VMs, %d of them new; want 2 with 1 replacement", len(after), replacements)
	}
	if err := EndSession(ctx, statePath, info.VM, io.Discard); err == nil {
		t.Error("ending a session of a deleted VM succeeded")
	}

	// An operator's VM made by hand: teardown must delete it too.
	if _, err := g.Clients.CreateVM(Namespace, "by-hand", mustEnv(t, g), TemplateName, "digitalocean"); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	text := out.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^playing Gargantua v3\.0 `),
		regexp.MustCompile(`(?m)^deleting VM set pg-set `),
		regexp.MustCompile(`(?m)^deleting VM by-hand$`),
		regexp.MustCompile(`(?m)^no VMs left; fake DigitalOcean holds 0 droplets and 0 keys`),
	} {
		if !want.MatchString(text) {
			t.Errorf("output lacks %s", want)
		}
	}
	if res.DropletsLeft != 0 || res.KeysLeft != 0 {
		t.Errorf("fake still holds %d droplets and %d keys", res.DropletsLeft, res.KeysLeft)
	}
	if _, err := os.Stat(statePath); !os.IsNotExist(err) {
		t.Errorf("state file %s not removed: %v", statePath, err)
	}
	if _, err := StartSession(context.Background(), statePath, "bob", io.Discard); !errors.Is(err, ErrNoPlayground) {
		t.Errorf("session start after exit: %v, want ErrNoPlayground", err)
	}
}

func mustEnv(t *testing.T, g *gargantuasim.Gargantua) *hfv1.Environment {
	t.Helper()
	env, err := g.Clients.Envs.Get(Namespace, EnvName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func TestSessionCommandsWithoutPlaygroundFail(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.json")
	if _, err := StartSession(context.Background(), missing, "alice", io.Discard); !errors.Is(err, ErrNoPlayground) {
		t.Errorf("start without state file: %v, want ErrNoPlayground", err)
	}
	// A state file left by a process that is gone (pid 0 is never ours).
	stale := filepath.Join(dir, "stale.json")
	if err := writeState(stale, State{PID: 0, Kubeconfig: filepath.Join(dir, "kubeconfig")}); err != nil {
		t.Fatal(err)
	}
	err := EndSession(context.Background(), stale, "pg-set-1", io.Discard)
	if !errors.Is(err, ErrNoPlayground) || !strings.Contains(err.Error(), "stale") {
		t.Errorf("end with a stale state file: %v, want ErrNoPlayground saying stale", err)
	}
}

// TestAbortedCleanupNamesWhatRemains makes DigitalOcean refuse deletes and
// cuts cleanup short, as a second Ctrl-C does, and checks that the error
// names each thing left behind.
func TestAbortedCleanupNamesWhatRemains(t *testing.T) {
	testenv.SkipUnlessFull(t) // Run starts a control plane
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	abort := make(chan struct{})
	var out testutil.SyncBuffer
	refuse := fakedo.FaultRule{ErrorRate: 1}
	err := Run(ctx, Options{
		VMs: 1, BootDelay: 300 * time.Millisecond, BaseDir: t.TempDir(), Abort: abort,
		OnReady: func() { close(abort); cancel() },
		// The VM's key stays registered: its delete, once the droplet exists, fails too.
		faults: &fakedo.Faults{Rules: map[string]fakedo.FaultRule{fakedo.RouteDeleteKey: refuse}},
		cleanupFaults: &fakedo.Faults{Rules: map[string]fakedo.FaultRule{
			fakedo.RouteDeleteDroplet: refuse, fakedo.RouteDeleteDropletsByTag: refuse, fakedo.RouteDeleteKey: refuse}},
	}, io.MultiWriter(&out, testutil.LogWriter(t)))
	if err == nil {
		t.Fatal("Run succeeded although cleanup was aborted at once")
	}
	t.Log(err)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`^cleanup aborted after [\d.]+s; left behind:\n`),
		regexp.MustCompile(`(?m)^  VMs \(1\): pg-vm-1 \(finalizers \[\S+`),
		regexp.MustCompile(`(?m)^  Droplet objects \(1\): pg-vm-1 \(droplet \d+, finalizers `),
		regexp.MustCompile(`(?m)^  Key objects \(1\): \S+ \(finalizers `),
		regexp.MustCompile(`(?m)^  fake DigitalOcean droplets \(1\): pg-vm-1 \(id \d+, \w+\)$`),
		regexp.MustCompile(`(?m)^  fake DigitalOcean keys \(1\): \S+ \(id \d+\)$`),
	} {
		if !want.MatchString(err.Error()) {
			t.Errorf("error lacks %s", want)
		}
	}
	if !regexp.MustCompile(`(?m)^deleting VM pg-vm-1$`).MatchString(out.String()) {
		t.Error("shutdown did not name the VM it deleted")
	}
}

// TestWarmPoolFlagShowsVMsTakingPoolDroplets runs the playground with a
// warm pool: the VMs made at start take the pool's droplets, the output
// says so and how to watch the pool, and nothing is left at the end.
func TestWarmPoolFlagShowsVMsTakingPoolDroplets(t *testing.T) {
	testenv.SkipUnlessFull(t) // Run starts a control plane
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	var res Result
	err := Run(ctx, Options{
		VMs: 2, BootDelay: 300 * time.Millisecond, BaseDir: t.TempDir(), Result: &res, WarmPool: "2",
		OnReady: func() { cancel() },
	}, io.MultiWriter(&out, testutil.LogWriter(t)))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	text := out.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^warm pool \S+: 2 ready, 0 booting, wanted 2$`),
		regexp.MustCompile(`(?m)^2 of 2 VMs took a droplet from the warm pool`),
		regexp.MustCompile(`(?m)^kubectl get warmpools -n hobbyfarm$`),
	} {
		if !want.MatchString(text) {
			t.Errorf("output lacks %s", want)
		}
	}
	if res.Claimed != 2 {
		t.Errorf("%d of 2 VMs took a pool droplet, want 2", res.Claimed)
	}
	if res.DropletsLeft != 0 || res.KeysLeft != 0 {
		t.Errorf("fake still holds %d droplets and %d keys", res.DropletsLeft, res.KeysLeft)
	}
}

func TestCheckWarmPool(t *testing.T) {
	for value, ok := range map[string]bool{"": true, "1": true, "100": true, "auto": true, "0": false, "101": false, "five": false, "Auto": false} {
		if err := CheckWarmPool(value); (err == nil) != ok {
			t.Errorf("CheckWarmPool(%q) = %v, want ok %v", value, err, ok)
		}
	}
}
