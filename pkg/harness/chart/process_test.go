package chart

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// No kubelet runs in these tests: a container of the chart runs as a local process
// of the real binary, with the args the chart renders, and the test probes it the
// way the kubelet would.

// podHostnameEnv tells the test binary to act as a pod's UTS namespace: set this
// hostname, then exec the command in its arguments (see TestMain).
const podHostnameEnv = "HF_DO_CHART_TEST_POD_HOSTNAME"

// execAsPod sets the hostname and replaces the test binary with os.Args[1:]. It is
// the first thing a child started by podCommand does.
func execAsPod(hostname string) {
	if err := syscall.Sethostname([]byte(hostname)); err != nil {
		fmt.Fprintln(os.Stderr, "sethostname:", err)
		os.Exit(127)
	}
	env := image.EnvironWithout(podHostnameEnv + "=")
	err := syscall.Exec(os.Args[1], os.Args[1:], env)
	fmt.Fprintln(os.Stderr, "exec:", err)
	os.Exit(127)
}

// podCommand runs bin with args in a UTS namespace of its own whose hostname is pod,
// as a pod's container runs: wrangler's leader election names a replica by its
// hostname, so two replicas on one machine need two. It needs root.
func podCommand(pod, bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append([]string{bin}, args...)...)
	cmd.Env = append(image.EnvironWithout("KUBECONFIG=", "HF_", "DIGITALOCEAN_", "CATTLE_"), podHostnameEnv+"="+pod)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUTS}
	return cmd
}

// process is a started command, its combined output and its exit.
type process struct {
	name   string
	cmd    *exec.Cmd
	logs   *testutil.SyncBuffer
	exited chan struct{}
	err    error // set once exited is closed
}

// start starts cmd; on cleanup it is stopped, and its output logged if the test failed.
func start(t *testing.T, name string, cmd *exec.Cmd) *process {
	t.Helper()
	p := &process{name: name, cmd: cmd, logs: &testutil.SyncBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("%s log:\n%s", name, p.logs.String())
		}
	})
	return p
}

// stop sends SIGTERM, as the kubelet does, and kills the process if it has not
// exited 10 s later (the pod's grace period is longer).
func (p *process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

func (p *process) done() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// probe does what the kubelet does for an httpGet probe of container c: GET the
// path on the container port the probe names (by name or number), at the pod's
// address (here loopback), within the probe's timeout; 200 to 399 is a success.
func probe(c corev1.Container, pr *corev1.Probe) error {
	if pr == nil || pr.HTTPGet == nil {
		return fmt.Errorf("container %s has no httpGet probe", c.Name)
	}
	port := pr.HTTPGet.Port.IntValue()
	if pr.HTTPGet.Port.Type == intstr.String {
		for _, p := range c.Ports {
			if p.Name == pr.HTTPGet.Port.StrVal {
				port = int(p.ContainerPort)
			}
		}
	}
	if port == 0 {
		return fmt.Errorf("probe port %s is no port of container %s", pr.HTTPGet.Port.String(), c.Name)
	}
	scheme := strings.ToLower(string(pr.HTTPGet.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	client := &http.Client{Timeout: time.Duration(max(pr.TimeoutSeconds, 1)) * time.Second}
	resp, err := client.Get(fmt.Sprintf("%s://127.0.0.1:%d%s", scheme, port, pr.HTTPGet.Path))
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return fmt.Errorf("GET %s: %d", pr.HTTPGet.Path, resp.StatusCode)
	}
	return nil
}

// livenessBudget is how long the kubelet lets a container fail its liveness probe
// before it restarts it: the initial delay plus failureThreshold periods.
func livenessBudget(pr *corev1.Probe) time.Duration {
	return time.Duration(pr.InitialDelaySeconds+max(pr.FailureThreshold, 1)*max(pr.PeriodSeconds, 1)) * time.Second
}

// untilProbed probes until a success, failing the test if the process exits or
// within passes first.
func untilProbed(t *testing.T, p *process, c corev1.Container, pr *corev1.Probe, what string, within time.Duration) {
	t.Helper()
	testutil.Eventually(t, within, p.name+" "+what, func() string {
		if p.done() {
			t.Fatalf("%s exited before %s: %v", p.name, what, p.err)
		}
		if err := probe(c, pr); err != nil {
			return err.Error()
		}
		return ""
	})
}
