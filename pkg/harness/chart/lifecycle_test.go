package chart

import (
	"fmt"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/app"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/app/apptest"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLifecycleAsTheChartsServiceAccount provisions and deletes VMs with the
// controller authenticated as the chart's ServiceAccount, RBAC on.
func TestLifecycleAsTheChartsServiceAccount(t *testing.T) {
	env := testenv.Require(t)
	ctx := t.Context()
	ns := env.NewNamespace(t)
	ms := render(t, release, ns)
	newApplier(t, env.Config()).apply(ctx, t, ms, false)
	var d appsv1.Deployment
	only(t, ms, "Deployment").into(t, &d)
	saCfg, err := env.ServiceAccountConfig(ctx, ns, d.Spec.Template.Spec.ServiceAccountName)
	if err != nil {
		t.Fatal(err)
	}

	do := fakedo.New(fakedo.Options{BootDelay: 200 * time.Millisecond, SSH: true})
	if err := do.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(do.Close)
	do.AddAccount("dop_v1_rbac", fakedo.AccountOptions{})

	admin, err := gargantuasim.NewClients(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Secrets.Create(gargantuasim.TokenSecret(ns, "do-token", "dop_v1_rbac")); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Templates.Create(gargantuasim.Template(ns, "ubuntu", "ubuntu-22-04-x64", nil)); err != nil {
		t.Fatal(err)
	}
	environment, err := admin.Envs.Create(gargantuasim.Environment(ns, "do-env",
		map[string]string{"region": "nyc1", "token-secret": "do-token"},
		map[string]map[string]string{"ubuntu": {"size": "s-1vcpu-1gb"}}))
	if err != nil {
		t.Fatal(err)
	}

	// As the chart runs it: CRDs come from the chart, not the binary. The
	// keys' delete delay is shortened so that their deletes, which the
	// ServiceAccount must be allowed too, fall inside the test.
	apptest.Start(t, app.Options{Config: saCfg, Namespace: ns, APIURL: do.URL(),
		InstallCRDs: false, BootResync: 200 * time.Millisecond, SSHPort: do.SSHPort(),
		KeyDeleteDelay: time.Second})

	names := []string{"rbac-1", "rbac-2"}
	for _, n := range names {
		if _, err := admin.CreateVM(ns, n, environment, "ubuntu", "digitalocean"); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, 60*time.Second, "VMs running", func() string {
		for _, n := range names {
			vm, err := admin.VMs.Get(ns, n, metav1.GetOptions{})
			if err != nil || vm.Status.Status != hfv1.VmStatusRunning {
				return n + " not running"
			}
		}
		return ""
	})
	for _, n := range names {
		if err := admin.VMs.Delete(ns, n, nil); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, 60*time.Second, "VMs and droplets gone", func() string {
		if n := len(do.Droplets("dop_v1_rbac")) + len(do.Keys("dop_v1_rbac")); n > 0 {
			return fmt.Sprintf("%d droplets and keys left", n)
		}
		for _, n := range names {
			if _, err := admin.VMs.Get(ns, n, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return n + " still exists"
			}
		}
		return ""
	})
}
