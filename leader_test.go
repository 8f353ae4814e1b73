package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/app"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// replica is one controller process and what it has logged.
type replica struct {
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	logs bytes.Buffer
	// exited is closed once the process exited, with exitErr its Wait's error.
	exited  chan struct{}
	exitErr error
}

func (r *replica) logged(substr string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Contains(r.logs.String(), substr)
}

// shortLease makes a failover after a crash fit in a test.
var shortLease = []string{"CATTLE_ELECTION_LEASE_DURATION=4s", "CATTLE_ELECTION_RENEW_DEADLINE=3s", "CATTLE_ELECTION_RETRY_PERIOD=500ms"}

// longLease is far longer than a handover may take, so a Lease left to
// expire shows.
var longLease = []string{"CATTLE_ELECTION_LEASE_DURATION=40s", "CATTLE_ELECTION_RENEW_DEADLINE=30s", "CATTLE_ELECTION_RETRY_PERIOD=500ms"}

// startReplicaEnv starts a replica with env added to its environment.
func startReplicaEnv(t *testing.T, name string, env []string, args ...string) *replica {
	t.Helper()
	r := &replica{name: name, cmd: controllerCommand(t, args...), exited: make(chan struct{})}
	r.cmd.Env = append(append(r.cmd.Env, replicaHostnameEnv+"="+name), env...)
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUTS}
	stderr, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("starting replica %s (needs root for its own UTS namespace): %v", name, err)
	}
	t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		<-r.exited
		if t.Failed() {
			r.mu.Lock()
			t.Logf("%s logged:\n%s", name, r.logs.String())
			r.mu.Unlock()
		}
	})
	go func() {
		scanner := bufio.NewScanner(stderr)
		for scanner.Scan() {
			r.mu.Lock()
			r.logs.WriteString(scanner.Text() + "\n")
			r.mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, stderr)
		// Wait closes the pipe: only once everything is read.
		r.exitErr = r.cmd.Wait()
		close(r.exited)
	}()
	return r
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	waitUntil(t, time.Now().Add(timeout), what, cond)
}

func waitUntil(t *testing.T, deadline time.Time, what string, cond func() bool) {
	t.Helper()
	for {
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not by %s", what, deadline.Format(time.TimeOnly+".000"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// leaderFixture is an Environment served by the fake DigitalOcean, and the
// flags that run the controller on it with leader election.
type leaderFixture struct {
	ns          string
	do          *fakedo.Server
	hf          *gargantuasim.Clients
	environment *hfv1.Environment
	kube        kubernetes.Interface
	args        []string
}

const leaderToken = "dop_v1_leader"

func newLeaderFixture(t *testing.T) *leaderFixture {
	t.Helper()
	env := testenv.Require(t)
	f := &leaderFixture{ns: env.NewNamespace(t), do: fakedo.New(fakedo.Options{BootDelay: 200 * time.Millisecond, SSH: true})}
	if err := f.do.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.do.Close)
	f.do.AddAccount(leaderToken, fakedo.AccountOptions{})

	var err error
	if f.hf, err = gargantuasim.NewClients(env.Config()); err != nil {
		t.Fatal(err)
	}
	if f.kube, err = kubernetes.NewForConfig(env.Config()); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		create(f.hf.Secrets.Create(gargantuasim.TokenSecret(f.ns, "do-token", leaderToken))),
		create(f.hf.Templates.Create(gargantuasim.Template(f.ns, "ubuntu", "ubuntu-22-04-x64", nil))),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	f.environment, err = f.hf.Envs.Create(gargantuasim.Environment(f.ns, "do-env",
		map[string]string{"region": "nyc1", "token-secret": "do-token"},
		map[string]map[string]string{"ubuntu": {"size": "s-1vcpu-1gb"}}))
	if err != nil {
		t.Fatal(err)
	}
	f.args = []string{"--namespace", f.ns, "--kubeconfig", env.KubeconfigPath, "--do-api-url", f.do.URL(),
		"--leader-elect", "--metrics-addr", "", "--boot-resync", "300ms", "--log-level", "debug",
		"--ssh-port", strconv.Itoa(f.do.SSHPort())}
	return f
}

func (f *leaderFixture) createVM(t *testing.T, name string) {
	t.Helper()
	if _, err := f.hf.CreateVM(f.ns, name, f.environment, "ubuntu", "digitalocean"); err != nil {
		t.Fatal(err)
	}
}

func (f *leaderFixture) vmRunning(name string) func() bool {
	return func() bool {
		vm, err := f.hf.VMs.Get(f.ns, name, metav1.GetOptions{})
		return err == nil && vm.Status.Status == hfv1.VmStatusRunning
	}
}

// holder is the Lease's holderIdentity ("" when released or not found).
func (f *leaderFixture) holder(t *testing.T) string {
	t.Helper()
	lease, err := f.kube.CoordinationV1().Leases(f.ns).Get(context.Background(), app.DefaultLeaseName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	if lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}

// startLeaderAndStandby starts replica-a, lets it lead, then replica-b,
// and returns once replica-b tries for the Lease.
func (f *leaderFixture) startLeaderAndStandby(t *testing.T, env []string) (a, b *replica) {
	t.Helper()
	a = startReplicaEnv(t, "replica-a", env, f.args...)
	waitFor(t, 30*time.Second, "replica-a leads", func() bool { return a.logged("controller ready") })
	b = startReplicaEnv(t, "replica-b", env, f.args...)
	// client-go's leader election logs this through klog.
	waitFor(t, 30*time.Second, "replica-b stands by", func() bool { return b.logged("Attempting to acquire leader lease") })
	return a, b
}

func TestOnlyTheLeaderReconcilesAndAStandbyTakesOver(t *testing.T) {
	f := newLeaderFixture(t)
	a, b := f.startLeaderAndStandby(t, shortLease)
	time.Sleep(3 * time.Second)
	if b.logged("elected leader") || b.logged("controller ready") {
		t.Fatal("replica-b reconciles while replica-a leads")
	}

	f.createVM(t, "led-1")
	waitFor(t, 30*time.Second, "led-1 running", f.vmRunning("led-1"))
	if !a.logged("vm=led-1") || b.logged("vm=led-1") {
		t.Fatalf("led-1 was not handled by the leader alone; a logged it: %v, b logged it: %v", a.logged("vm=led-1"), b.logged("vm=led-1"))
	}

	// Kill the leader outright, create more work, and the standby finishes
	// it once the Lease expired.
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	f.createVM(t, "led-2")
	f.createVM(t, "led-3")
	waitFor(t, 30*time.Second, "replica-b takes over", func() bool { return b.logged("controller ready") })
	waitFor(t, 30*time.Second, "led-2 and led-3 running", func() bool { return f.vmRunning("led-2")() && f.vmRunning("led-3")() })
	if n := len(f.do.Droplets(leaderToken)); n != 3 {
		t.Errorf("fake holds %d droplets, want 3", n)
	}
}

// terminationGrace is Kubernetes' default terminationGracePeriodSeconds.
const terminationGrace = 30 * time.Second

// On SIGTERM the leader releases the Lease, long before it would expire,
// and exits 0; the standby leads within seconds.
func TestASIGTERMedLeaderHandsTheLeaseOverAtOnce(t *testing.T) {
	f := newLeaderFixture(t)
	a, b := f.startLeaderAndStandby(t, longLease)
	if got := f.holder(t); got != "replica-a" {
		t.Fatalf("Lease held by %q, want replica-a", got)
	}

	signaled := time.Now()
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	f.createVM(t, "after-sigterm")
	waitUntil(t, signaled.Add(2*time.Second), "the Lease released or taken by replica-b", func() bool {
		h := f.holder(t)
		return h == "" || h == "replica-b"
	})
	waitUntil(t, signaled.Add(5*time.Second), "replica-b leads", func() bool { return b.logged("elected leader") })
	select {
	case <-a.exited:
		if a.exitErr != nil {
			t.Errorf("replica-a after SIGTERM: %v, want exit 0", a.exitErr)
		}
	case <-time.After(time.Until(signaled.Add(terminationGrace))):
		t.Fatalf("replica-a still runs %v after SIGTERM", terminationGrace)
	}
	waitFor(t, 30*time.Second, "after-sigterm running", f.vmRunning("after-sigterm"))
	if n := len(f.do.Droplets(leaderToken)); n != 1 {
		t.Errorf("fake holds %d droplets, want 1", n)
	}
}

// A leader told to stop while its droplet create is unanswered keeps the
// Lease until the answer is on record: a new leader could not find that
// droplet yet. Then it hands over, and no second droplet is made.
func TestTheLeaseIsKeptWhileADropletCreateIsUnanswered(t *testing.T) {
	f := newLeaderFixture(t)
	hold := f.do.HoldAfterApply(fakedo.RouteCreateDroplets)
	t.Cleanup(hold.Release)
	a, b := f.startLeaderAndStandby(t, longLease)

	f.createVM(t, "held")
	select {
	case <-hold.Reached():
	case <-time.After(30 * time.Second):
		t.Fatal("no droplet create reached DigitalOcean after 30s")
	}
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "replica-a waits for its DigitalOcean requests", func() bool {
		return a.logged("waiting for DigitalOcean requests under way")
	})
	if got := f.holder(t); got != "replica-a" {
		t.Fatalf("Lease held by %q while replica-a's droplet create is unanswered, want replica-a", got)
	}

	released := time.Now()
	hold.Release()
	waitUntil(t, released.Add(5*time.Second), "replica-b leads", func() bool { return b.logged("elected leader") })
	select {
	case <-a.exited:
		if a.exitErr != nil {
			t.Errorf("replica-a after SIGTERM: %v, want exit 0", a.exitErr)
		}
	case <-time.After(terminationGrace):
		t.Fatalf("replica-a still runs %v after its create was answered", terminationGrace)
	}
	waitFor(t, 30*time.Second, "held running", f.vmRunning("held"))
	if n := len(f.do.Droplets(leaderToken)); n != 1 {
		t.Errorf("fake holds %d droplets, want 1", n)
	}
	if n := f.do.RequestCounts()[fakedo.RouteCreateDroplets+" dropped"]; n != 0 {
		t.Errorf("%d droplet creates lost their answer", n)
	}
}

func create[T any](_ T, err error) error { return err }
