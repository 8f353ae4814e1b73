package image_test

import (
	"encoding/pem"
	"fmt"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image/imagetest"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const runsToken = "dop_v1_image"

// TestImageRunsAsNonRootOnAReadOnlyRoot runs the host platform's image as
// a pod of the chart would: its entrypoint from its own filesystem, mounted
// read-only, as 65532:65532, with an empty environment. It provisions a VM
// and deletes it again, through the test apiserver and the fake DigitalOcean.
//
// The fake is reached over TLS, with a certificate only the copy of the
// image's CA bundle in the sandbox vouches for: a VM running shows that the
// binary finds /etc/ssl/certs/ca-certificates.crt, as it must to reach
// DigitalOcean.
func TestImageRunsAsNonRootOnAReadOnlyRoot(t *testing.T) {
	env := testenv.Require(t)
	idx, _ := realIndex(t)
	img, err := imagetest.PlatformImage(idx, runtime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := imagetest.Unpack(img, root); err != nil {
		t.Fatal(err)
	}
	// The sandbox's "/", which 65532 must be able to enter; TempDir made it 0700.
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	// The admin kubeconfig embeds its certificates: a copy is all it needs.
	kubeconfig, err := os.ReadFile(env.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "kubeconfig"), kubeconfig, 0o644); err != nil {
		t.Fatal(err)
	}

	do := fakedo.New(fakedo.Options{BootDelay: 200 * time.Millisecond, SSH: true})
	if err := do.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(do.Close)
	do.AddAccount(runsToken, fakedo.AccountOptions{})
	doURL, err := url.Parse(do.URL())
	if err != nil {
		t.Fatal(err)
	}
	tlsDO := httptest.NewUnstartedServer(httputil.NewSingleHostReverseProxy(doURL))
	tlsDO.StartTLS()
	t.Cleanup(tlsDO.Close)
	trustInSandbox(t, root, tlsDO)

	ns := env.NewNamespace(t)
	hf, err := gargantuasim.NewClients(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hf.Secrets.Create(gargantuasim.TokenSecret(ns, "do-token", runsToken)); err != nil {
		t.Fatal(err)
	}
	if _, err := hf.Templates.Create(gargantuasim.Template(ns, "ubuntu", "ubuntu-22-04-x64", nil)); err != nil {
		t.Fatal(err)
	}
	environment, err := hf.Envs.Create(gargantuasim.Environment(ns, "do-env",
		map[string]string{"region": "nyc1", "token-secret": "do-token"},
		map[string]map[string]string{"ubuntu": {"size": "s-1vcpu-1gb"}}))
	if err != nil {
		t.Fatal(err)
	}

	// CRDs as the chart installs them: from crds/, not by the binary.
	ctl := startSandboxed(t, root, "--namespace", ns, "--kubeconfig", "/kubeconfig", "--do-api-url", tlsDO.URL,
		"--install-crds=false", "--metrics-addr=", "--boot-resync", "300ms", "--log-level", "debug",
		"--ssh-port", strconv.Itoa(do.SSHPort()))
	if uid, gid := ctl.ids(t); uid != "65532" || gid != "65532" {
		t.Errorf("controller runs as uid %s gid %s, want 65532", uid, gid)
	}

	if _, err := hf.CreateVM(ns, "image-vm", environment, "ubuntu", "digitalocean"); err != nil {
		t.Fatal(err)
	}
	ctl.eventually(t, "VM running", func() string {
		vm, err := hf.VMs.Get(ns, "image-vm", metav1.GetOptions{})
		if err != nil || vm.Status.Status != hfv1.VmStatusRunning {
			return fmt.Sprintf("VM %v %v", err, vm.Status.Status)
		}
		return ""
	})
	if err := hf.VMs.Delete(ns, "image-vm", nil); err != nil {
		t.Fatal(err)
	}
	ctl.eventually(t, "VM and its droplet gone", func() string {
		if n, k := len(do.Droplets(runsToken)), len(do.Keys(runsToken)); n+k > 0 {
			return fmt.Sprintf("%d droplets and %d keys left at the fake", n, k)
		}
		if _, err := hf.VMs.Get(ns, "image-vm", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Sprintf("VM still there (%v)", err)
		}
		return ""
	})
}

// trustInSandbox appends srv's certificate to the sandbox's copy of the CA bundle.
func trustInSandbox(t *testing.T, root string, srv *httptest.Server) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(root, image.CABundlePath), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pem.Encode(f, &pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}); err != nil {
		t.Fatal(err)
	}
}

// sandboxed is the controller running in the sandbox.
type sandboxed struct {
	pid    int
	logs   *testutil.SyncBuffer
	exited chan error
}

func startSandboxed(t *testing.T, root string, args ...string) *sandboxed {
	t.Helper()
	cmd := sandboxCommand(t, root, args...)
	s := &sandboxed{logs: &testutil.SyncBuffer{}, exited: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = s.logs, s.logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the sandbox (needs root for a mount namespace): %v", err)
	}
	s.pid = cmd.Process.Pid
	go func() { s.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		var exit error
		select {
		case exit = <-s.exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			exit = <-s.exited
		}
		if t.Failed() {
			t.Logf("controller exited (%v); its log:\n%s", exit, s.logs.String())
		}
	})
	// The launcher becomes the controller (exec), once it logs.
	s.eventually(t, "controller started", func() string {
		if !strings.Contains(s.logs.String(), "starting") {
			return "no log line yet"
		}
		return ""
	})
	return s
}

// eventually is testutil.Eventually, failing at once if the controller exits.
func (s *sandboxed) eventually(t *testing.T, what string, cond func() string) {
	t.Helper()
	testutil.Eventually(t, 2*time.Minute, what, func() string {
		select {
		case err := <-s.exited:
			s.exited <- err
			t.Fatalf("%s: the controller exited: %v\n%s", what, err, s.logs.String())
		default:
		}
		return cond()
	})
}

// ids are the process's real uid and gid, from /proc.
func (s *sandboxed) ids(t *testing.T) (uid, gid string) {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
			uid = f[1]
		} else if len(f) > 1 && f[0] == "Gid:" {
			gid = f[1]
		}
	}
	return uid, gid
}
