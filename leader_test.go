package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean/fake"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/testenv"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// replica is one controller process and what it has logged.
type replica struct {
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	logs bytes.Buffer
}

func (r *replica) logged(substr string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Contains(r.logs.String(), substr)
}

func startReplica(t *testing.T, name string, args ...string) *replica {
	t.Helper()
	r := &replica{name: name, cmd: controllerCommand(t, args...)}
	r.cmd.Env = append(r.cmd.Env, replicaHostnameEnv+"="+name,
		// Short leases so failover fits in a test.
		"CATTLE_ELECTION_LEASE_DURATION=4s", "CATTLE_ELECTION_RENEW_DEADLINE=3s", "CATTLE_ELECTION_RETRY_PERIOD=500ms")
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUTS}
	stderr, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("starting replica %s (needs root for its own UTS namespace): %v", name, err)
	}
	t.Cleanup(func() { _ = r.cmd.Process.Kill(); _ = r.cmd.Wait() })
	go func() {
		scanner := bufio.NewScanner(stderr)
		for scanner.Scan() {
			r.mu.Lock()
			r.logs.WriteString(scanner.Text() + "\n")
			r.mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	return r
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: not after %v", what, timeout)
}

func TestOnlyTheLeaderReconcilesAndAStandbyTakesOver(t *testing.T) {
	env := testenv.Require(t)
	ns := env.NewNamespace(t)
	do := fake.New(fake.Options{BootDelay: 200 * time.Millisecond, SSH: true})
	if err := do.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(do.Close)
	do.AddAccount("dop_v1_leader", fake.AccountOptions{})

	hf, err := gargantuasim.NewClients(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		create(hf.Secrets.Create(gargantuasim.TokenSecret(ns, "do-token", "dop_v1_leader"))),
		create(hf.Templates.Create(gargantuasim.Template(ns, "ubuntu", "ubuntu-22-04-x64", nil))),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	environment, err := hf.Envs.Create(gargantuasim.Environment(ns, "do-env",
		map[string]string{"region": "nyc1", "token-secret": "do-token"},
		map[string]map[string]string{"ubuntu": {"size": "s-1vcpu-1gb"}}))
	if err != nil {
		t.Fatal(err)
	}

	args := []string{"--namespace", ns, "--kubeconfig", env.KubeconfigPath, "--do-api-url", do.URL(),
		"--leader-elect", "--metrics-addr", "", "--boot-resync", "300ms", "--log-level", "debug",
		"--ssh-port", strconv.Itoa(do.SSHPort())}
	a := startReplica(t, "replica-a", args...)
	waitFor(t, 30*time.Second, "replica-a leads", func() bool { return a.logged("controller ready") })
	b := startReplica(t, "replica-b", args...)
	time.Sleep(3 * time.Second)
	if b.logged("elected leader") || b.logged("controller ready") {
		t.Fatal("replica-b reconciles while replica-a leads")
	}

	vmRunning := func(name string) func() bool {
		return func() bool {
			vm, err := hf.VMs.Get(ns, name, metav1.GetOptions{})
			return err == nil && vm.Status.Status == hfv1.VmStatusRunning
		}
	}
	if _, err := hf.CreateVM(ns, "led-1", environment, "ubuntu", "digitalocean"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "led-1 running", vmRunning("led-1"))
	if !a.logged("vm=led-1") || b.logged("vm=led-1") {
		t.Fatalf("led-1 was not handled by the leader alone; a logged it: %v, b logged it: %v", a.logged("vm=led-1"), b.logged("vm=led-1"))
	}

	// Kill the leader outright, create more work, and the standby finishes it.
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for i := 2; i <= 3; i++ {
		if _, err := hf.CreateVM(ns, fmt.Sprintf("led-%d", i), environment, "ubuntu", "digitalocean"); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 30*time.Second, "replica-b takes over", func() bool { return b.logged("controller ready") })
	waitFor(t, 30*time.Second, "led-2 and led-3 running", func() bool { return vmRunning("led-2")() && vmRunning("led-3")() })
	if n := len(do.Droplets("dop_v1_leader")); n != 3 {
		t.Errorf("fake holds %d droplets, want 3", n)
	}
}

func create[T any](_ T, err error) error { return err }
