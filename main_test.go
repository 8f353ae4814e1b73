package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
)

// runMainEnv makes the test binary act as the controller binary when set.
const runMainEnv = "HF_DO_TEST_RUN_MAIN"

// replicaHostnameEnv names the hostname of a replica started in its own UTS namespace.
const replicaHostnameEnv = "HF_DO_TEST_HOSTNAME"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		// Replicas of one test run in their own UTS namespaces; wrangler's
		// leader election tells replicas apart by hostname, as pods differ.
		if name := os.Getenv(replicaHostnameEnv); name != "" {
			if err := syscall.Sethostname([]byte(name)); err != nil {
				panic(err)
			}
		}
		os.Exit(run(os.Args[1:], os.Stderr))
	}
	// The binary installs our CRDs itself; Gargantua's are Gargantua's to install.
	testenv.Main(m, testenv.Options{CRDs: testenv.HobbyFarmCRDs()})
}

func controllerCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "HF_NAMESPACE=", "KUBECONFIG=")
	return cmd
}

func TestInvalidFlagsExitWithOneLineNamingTheFlag(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.yaml")
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{}, "--namespace"},
		{[]string{"--namespace", "hf", "--kubeconfig", missing}, "--kubeconfig"},
		{[]string{"--namespace", "hf", "--workers", "0"}, "--workers"},
		{[]string{"--namespace", "hf", "--log-format", "xml"}, "--log-format"},
		{[]string{"--namespace", "hf", "--lease-name", "controller-manager"}, "--lease-name"},
		{[]string{"--namespace", "hf", "--ssh-port", "0"}, "--ssh-port"},
		{[]string{"--namespace", "hf", "--config-error-grace", "0s"}, "--config-error-grace"},
		{[]string{"--namespace", "hf", "--warm-pool-surplus-idle", "0s"}, "--warm-pool-surplus-idle"},
	} {
		var stderr bytes.Buffer
		cmd := controllerCommand(t, c.args...)
		cmd.Stderr = &stderr
		err := cmd.Run()
		exit, ok := err.(*exec.ExitError)
		if !ok || exit.ExitCode() == 0 {
			t.Errorf("%v: exit %v, want non-zero", c.args, err)
			continue
		}
		out := strings.TrimSpace(stderr.String())
		if strings.Count(out, "\n") != 0 || !strings.Contains(out, c.flag) {
			t.Errorf("%v: stderr %q, want one line naming %s", c.args, out, c.flag)
		}
	}
}

func TestUnreachableAPIServerExitsNonZero(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	// A loopback port nothing listens on.
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := controllerCommand(t, "--namespace", "hf", "--kubeconfig", kubeconfig, "--metrics-addr", "")
	cmd.Stderr = &stderr
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() == 0 {
		t.Fatalf("exit %v, want non-zero", err)
	}
	if !strings.Contains(stderr.String(), "--kubeconfig") {
		t.Errorf("stderr %q does not name --kubeconfig", stderr.String())
	}
}

func TestStartsReadyAndStopsOnSIGTERM(t *testing.T) {
	env := testenv.Require(t)
	ns := env.NewNamespace(t)
	cmd := controllerCommand(t, "--namespace", ns, "--kubeconfig", env.KubeconfigPath, "--do-api-url", "http://127.0.0.1:1/", "--metrics-addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	ready := make(chan struct{})
	var logs bytes.Buffer
	go func() {
		scanner := bufio.NewScanner(stderr)
		for scanner.Scan() {
			logs.WriteString(scanner.Text() + "\n")
			if strings.Contains(scanner.Text(), "controller ready: caches synced") {
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		t.Fatalf("not ready after 60s; logs:\n%s", logs.String())
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("still running 5s after SIGTERM")
	}
}
