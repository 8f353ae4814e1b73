package chart

import (
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestControllerRunsWithTheChartsPermissions runs the real controller binary with the
// chart's args, authenticated as the chart's ServiceAccount, against the test
// apiserver: it must elect itself, sync every cache (list/watch on all it reads and
// applies) and turn ready, with no Forbidden error in its log.
func TestControllerRunsWithTheChartsPermissions(t *testing.T) {
	env := testenv.Require(t)
	ctx := t.Context()
	ns := env.NewNamespace(t)
	port := freePort(t)

	ms := render(t, release, ns, "--set", fmt.Sprintf("metrics.port=%d", port))
	newApplier(t, env.Config()).apply(ctx, t, ms, false)
	var d appsv1.Deployment
	only(t, ms, "Deployment").into(t, &d)
	c := controller(t, &d)

	saCfg, err := env.ServiceAccountConfig(ctx, ns, d.Spec.Template.Spec.ServiceAccountName)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := writeTokenKubeconfig(t, saCfg)

	bin := buildController(t)
	// The chart's args, then what a pod gets from its environment instead: the
	// apiserver, and loopback only for the endpoints (the last flag wins).
	args := append(slices.Clone(c.Args),
		"--kubeconfig="+kubeconfig,
		"--do-api-url=http://127.0.0.1:1", // never called: there are no VMs
		fmt.Sprintf("--metrics-addr=127.0.0.1:%d", port),
	)
	cmd := exec.Command(bin, args...)
	cmd.Env = image.EnvironWithout("KUBECONFIG=", "HF_", "DIGITALOCEAN_")
	ctl := start(t, "controller", cmd)

	untilProbed(t, ctl, c, c.ReadinessProbe, "ready (caches synced?)", 60*time.Second)
	if err := probe(c, c.LivenessProbe); err != nil {
		t.Errorf("liveness: %v", err)
	}
	if code := get(&http.Client{Timeout: 2 * time.Second}, fmt.Sprintf("http://127.0.0.1:%d/metrics", port)); code != http.StatusOK {
		t.Errorf("/metrics: %d, want 200", code)
	}

	admin, err := kubernetes.NewForConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	lease, err := admin.CoordinationV1().Leases(ns).Get(ctx, "hf-provisioner-digitalocean", metav1.GetOptions{})
	if err != nil {
		t.Errorf("leader Lease: %v", err)
	} else if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Errorf("leader Lease has no holder: %+v", lease.Spec)
	}

	// Give watches a moment to report errors that a synced cache would not show.
	time.Sleep(time.Second)
	if log := ctl.logs.String(); strings.Contains(strings.ToLower(log), "forbidden") {
		t.Errorf("controller hit a Forbidden error with the chart's Role:\n%s", log)
	}
}

func get(client *http.Client, url string) int {
	resp, err := client.Get(url)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	return resp.StatusCode
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// writeTokenKubeconfig writes a kubeconfig for a bearer-token rest.Config.
func writeTokenKubeconfig(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "sa"}
	kc.CurrentContext = "test"
	path := filepath.Join(t.TempDir(), "sa.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}
