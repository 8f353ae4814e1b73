package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/playground"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
)

// TestHelpersAndCtrlC runs the playground program, drives it with its own
// commands as an operator would from another terminal (vm add, a VM made the
// raw way, vm list, ssh, session start/end, vm delete), then sends SIGINT and
// checks that shutdown named every VM, showed progress and left the fake
// with 0 droplets and 0 keys.
func TestHelpersAndCtrlC(t *testing.T) {
	testenv.SkipUnlessFull(t) // the program starts a control plane
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "state.json")
	var out testutil.SyncBuffer
	pg := exec.Command(exe, "--vms", "1", "--boot-delay", "300ms", "--state", state)
	pg.Env = append(os.Environ(), asMainEnv+"=1")
	pg.Stdout = io.MultiWriter(&out, testutil.LogWriter(t))
	pg.Stderr = pg.Stdout
	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- pg.Wait() }()
	defer func() {
		if pg.ProcessState == nil {
			_ = pg.Process.Kill()
			t.Logf("playground killed: %v", <-exited)
		}
	}()
	waitOutput(t, &out, exited, "press Ctrl-C", 4*time.Minute)

	// The playground's own VM gets an ssh helper line, as every VM does.
	if !regexp.MustCompile(`(?m)^pg-vm-1  ssh: scripts/playground ssh pg-vm-1$`).MatchString(out.String()) {
		t.Errorf("no ssh helper line for pg-vm-1")
	}

	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), asMainEnv+"=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.Output()
		t.Logf("$ scripts/playground %s\n%s%s", strings.Join(args, " "), stdout, stderr.String())
		if err != nil {
			t.Fatalf("scripts/playground %v: %v", args, err)
		}
		return string(stdout)
	}

	// A VM made by hand the raw way, as the README's Gargantua would.
	s, err := playground.ReadState(state)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	hf, err := gargantuasim.NewClients(cfg)
	if err != nil {
		t.Fatal(err)
	}
	env, err := hf.Envs.Get(s.Namespace, s.Environment, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hf.CreateVM(s.Namespace, "by-hand", env, s.Template, "digitalocean"); err != nil {
		t.Fatal(err)
	}

	added := regexp.MustCompile(`(?m)^pg-vm-\d+$`).FindAllString(run("vm", "add", "--state", state, "--count", "2", "--user", "bob", "--wait"), -1)
	if len(added) != 2 || added[0] == "pg-vm-1" || added[0] == added[1] {
		t.Fatalf("vm add --count 2 printed names %q, want two new ones", added)
	}
	for _, name := range added {
		vm, err := hf.VMs.Get(s.Namespace, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if vm.Labels[gargantuasim.ProvisionerKey] != "digitalocean" || vm.Spec.Provision || vm.Spec.UserId != "bob" ||
			vm.Status.EnvironmentId != s.Environment || vm.Status.Status != hfv1.VmStatusRunning {
			t.Errorf("added VM %s: provisioner label %q, provision %v, user %q, environment_id %q, status %q",
				name, vm.Labels[gargantuasim.ProvisionerKey], vm.Spec.Provision, vm.Spec.UserId, vm.Status.EnvironmentId, vm.Status.Status)
		}
	}
	testutil.Eventually(t, 2*time.Minute, "VM by-hand running", func() string {
		vm, err := hf.VMs.Get(s.Namespace, "by-hand", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if vm.Status.Status != hfv1.VmStatusRunning {
			return fmt.Sprintf("status %q", vm.Status.Status)
		}
		return ""
	})
	list := run("vm", "list", "--state", state)
	for _, name := range append([]string{"pg-vm-1", "by-hand"}, added...) {
		if !regexp.MustCompile(`(?m)^` + name + `\s+running\s+127\.`).MatchString(list) {
			t.Errorf("vm list shows no running %s", name)
		}
	}

	// ssh runs the real ssh client against the fake droplet.
	if _, err := exec.LookPath("ssh"); err == nil {
		if got := run("ssh", added[0], "--state", state, "--", "echo", "hello from", "the fake"); got != "hello from the fake\n" {
			t.Errorf("ssh %s -- echo: %q", added[0], got)
		}
		byHand, err := hf.VMs.Get(s.Namespace, "by-hand", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := run("ssh", "--state", state, "by-hand", "hostname"); got != byHand.Status.Hostname+"\n" {
			t.Errorf("ssh by-hand hostname: %q, want %q", got, byHand.Status.Hostname)
		}
	} else {
		t.Log("no ssh client installed: only --print is checked")
	}
	printed := run("ssh", "--print", "--state", state, "by-hand", "--", "hostname")
	sshLine := regexp.MustCompile(`^ssh -i (\S+) -p \d+ -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null root@127\.\d+\.\d+\.\d+ hostname\n$`)
	m := sshLine.FindStringSubmatch(printed)
	if m == nil {
		t.Fatalf("ssh --print: %q", printed)
	}
	if fi, err := os.Stat(m[1]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file %s: %v, mode %v; want 0600", m[1], err, fi.Mode().Perm())
	}

	// The session helpers still work (v1.0: an on-demand VM per session).
	started := run("session", "start", "--user", "alice", "--state", state)
	ended := regexp.MustCompile(`(?m)^end it: scripts/playground session end (\S+)$`).FindStringSubmatch(started)
	if ended == nil {
		t.Fatalf("session start printed no end command")
	}
	if got := run("session", "end", ended[1], "--state", state); !strings.Contains(got, ended[1]+"  gone") {
		t.Errorf("session end %s: %q", ended[1], got)
	}
	if got := run("vm", "delete", added[1], "--state", state); !strings.Contains(got, added[1]+"  gone") {
		t.Errorf("vm delete %s: %q", added[1], got)
	}

	// Ctrl-C.
	if err := pg.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("playground exited with %v", err)
		}
	case <-time.After(3 * time.Minute):
		t.Fatal("playground still running 3 minutes after SIGINT")
	}
	text := out.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^deleting VM pg-vm-1$`),
		regexp.MustCompile(`(?m)^deleting VM by-hand$`),
		regexp.MustCompile(`(?m)^deleting VM ` + added[0] + `$`),
		regexp.MustCompile(`(?m)^deleting 3 VMs: \d gone, \d left; fake DigitalOcean holds \d droplets, \d keys$`),
		regexp.MustCompile(`(?m)^no VMs left; fake DigitalOcean holds 0 droplets and 0 keys`),
	} {
		if !want.MatchString(text) {
			t.Errorf("output lacks %s", want)
		}
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("state file %s left: %v", state, err)
	}
}

// waitOutput waits until out contains want, failing if the program exits first.
func waitOutput(t *testing.T, out *testutil.SyncBuffer, exited <-chan error, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for !strings.Contains(out.String(), want) {
		select {
		case err := <-exited:
			t.Fatalf("playground exited (%v) before printing %q", err, want)
		case <-deadline:
			t.Fatalf("playground did not print %q within %v", want, timeout)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
