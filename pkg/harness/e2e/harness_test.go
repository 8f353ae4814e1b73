package e2e

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/app"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/app/apptest"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/crds"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

const (
	testToken   = "dop_v1_e2e-token"
	tokenSecret = "do-token"
)

func TestMain(m *testing.M) {
	ours, err := crds.Objects()
	if err != nil {
		panic(err)
	}
	testenv.Main(m, testenv.Options{CRDs: append(testenv.HobbyFarmCRDs(), ours...)})
}

// world is one test's namespace, fake DigitalOcean and running controller.
type world struct {
	t        *testing.T
	ns       string
	do       *fakedo.Server
	hf       *gargantuasim.Clients
	droplets provcontrollers.DropletClient
	keys     provcontrollers.KeyClient
	kube     kubernetes.Interface
}

type worldOptions struct {
	activeResync time.Duration
	fake         fakedo.Options
	// metricsAddr serves the controller's /metrics when set.
	metricsAddr string
	// sweepInterval and orphanGrace tune the orphan sweep (defaults: minutes).
	sweepInterval, orphanGrace time.Duration
	// configErrorGrace is how long an invalid config waits before its VMs
	// are reported failed (the controller's default when zero).
	configErrorGrace time.Duration
	// keepTainted turns off the deletion of tainted VMs.
	keepTainted bool
	// workers is the controller's workers per kind (4 when zero).
	workers int
	// tagTidyDelay is the controller's --tag-tidy-delay (its default when zero).
	tagTidyDelay time.Duration
	// refusedCreatePause is the controller's --refused-create-pause (its
	// default when zero).
	refusedCreatePause time.Duration
	// soldOutPause is the controller's --sold-out-pause (its default when
	// zero).
	soldOutPause time.Duration
	// dropletLimit is the test token's account's droplet limit (100 when
	// zero).
	dropletLimit int
	// beforeStart prepares the world before the controller starts, as an
	// earlier process would have left it.
	beforeStart func(w *world)
}

func newWorld(t *testing.T, o worldOptions) *world {
	t.Helper()
	env := testenv.Require(t)
	w := &world{t: t, ns: env.NewNamespace(t)}

	// Droplets serve SSH, at their own loopback addresses, so that the
	// reachability check logs in as it would to a real droplet.
	o.fake.SSH = true
	if o.fake.BootDelay == 0 {
		o.fake.BootDelay = 300 * time.Millisecond
	}
	w.do = fakedo.New(o.fake)
	if err := w.do.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.do.Close)
	w.do.AddAccount(testToken, fakedo.AccountOptions{DropletLimit: cmp.Or(o.dropletLimit, 100)})

	var err error
	if w.hf, err = gargantuasim.NewClients(env.Config()); err != nil {
		t.Fatal(err)
	}
	prov, err := provisioning.NewFactoryFromConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	w.droplets = prov.Provisioning().V1alpha1().Droplet()
	w.keys = prov.Provisioning().V1alpha1().Key()
	if w.kube, err = kubernetes.NewForConfig(env.Config()); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hf.Secrets.Create(gargantuasim.TokenSecret(w.ns, tokenSecret, testToken)); err != nil {
		t.Fatal(err)
	}

	if o.activeResync == 0 {
		o.activeResync = 30 * time.Second
	}
	if o.beforeStart != nil {
		o.beforeStart(w)
	}
	apptest.Start(t, app.Options{
		Config: env.Config(), Namespace: w.ns, APIURL: w.do.URL(), Workers: cmp.Or(o.workers, 4),
		BootResync: 300 * time.Millisecond, ActiveResync: o.activeResync, MetricsAddr: o.metricsAddr,
		SweepInterval: o.sweepInterval, OrphanGrace: o.orphanGrace, TagTidyDelay: o.tagTidyDelay,
		SSHPort: w.do.SSHPort(), ConfigErrorGrace: o.configErrorGrace, KeepTainted: o.keepTainted,
		RefusedCreatePause: o.refusedCreatePause, SoldOutPause: o.soldOutPause,
		// Deleted VMs' keys go a second after their droplets' deletes pause.
		KeyDeleteDelay: time.Second,
	})
	return w
}

// standardEnv is a valid Environment with two templates.
func (w *world) standardEnv(name string) *hfv1.Environment {
	w.t.Helper()
	for _, tmpl := range []*hfv1.VirtualMachineTemplate{
		gargantuasim.Template(w.ns, "ubuntu", "ubuntu-22-04-x64", nil),
		gargantuasim.Template(w.ns, "debian", "debian-12-x64", map[string]string{"size": "s-1vcpu-512mb-10gb"}),
	} {
		if _, err := w.hf.Templates.Create(tmpl); err != nil && !apierrors.IsAlreadyExists(err) {
			w.t.Fatal(err)
		}
	}
	return w.createEnv(gargantuasim.Environment(w.ns, name,
		map[string]string{"region": "nyc1", "token-secret": tokenSecret, "user_data": "#cloud-config\n"},
		map[string]map[string]string{
			"ubuntu": {"size": "s-1vcpu-1gb"},
			"debian": {"image": "debian-12-x64", "user_data": "#cloud-config\nhostname: debian\n"},
		}))
}

func (w *world) createEnv(env *hfv1.Environment) *hfv1.Environment {
	w.t.Helper()
	created, err := w.hf.Envs.Create(env)
	if err != nil {
		w.t.Fatal(err)
	}
	return created
}

func (w *world) createVM(name string, env *hfv1.Environment, template string) *hfv1.VirtualMachine {
	w.t.Helper()
	vm, err := w.hf.CreateVM(w.ns, name, env, template, "digitalocean")
	if err != nil {
		w.t.Fatal(err)
	}
	return vm
}

func (w *world) vm(name string) *hfv1.VirtualMachine {
	w.t.Helper()
	vm, err := w.hf.VMs.Get(w.ns, name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return vm
}

// eventually polls cond until it returns "" (done) or timeout, failing with its last word.
func (w *world) eventually(timeout time.Duration, what string, cond func() string) {
	w.t.Helper()
	testutil.Eventually(w.t, timeout, what, cond)
}

func (w *world) waitRunning(names ...string) {
	w.t.Helper()
	w.eventually(60*time.Second, "VMs running", func() string {
		for _, n := range names {
			vm := w.vm(n)
			if vm.Status.Status != hfv1.VmStatusRunning || vm.Status.PublicIP == "" {
				return fmt.Sprintf("%s is %q (ip %q)", n, vm.Status.Status, vm.Status.PublicIP)
			}
		}
		return ""
	})
}

func (w *world) droplet(name string) *v1alpha1.Droplet {
	w.t.Helper()
	d, err := w.droplets.Get(w.ns, name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return d
}

// vmEvents returns "Type Reason: message" lines of the Events on a VM.
func (w *world) vmEvents(name string) []string { return w.events("VirtualMachine", name) }

// events returns "Type Reason: message" lines of the Events on an object of kind.
func (w *world) events(kind, name string) []string {
	w.t.Helper()
	list, err := w.kube.CoreV1().Events(w.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name {
			out = append(out, e.Type+" "+e.Reason+": "+e.Message)
		}
	}
	return out
}

// eventCount is how many times an Event containing substr was recorded on
// an object of kind: the recorder folds repeats into one Event's count.
func (w *world) eventCount(kind, name, substr string) int32 {
	w.t.Helper()
	list, err := w.kube.CoreV1().Events(w.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	var n int32
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name && strings.Contains(e.Type+" "+e.Reason+": "+e.Message, substr) {
			n += max(e.Count, 1)
		}
	}
	return n
}

func hasEvent(events []string, substr string) bool {
	for _, e := range events {
		if strings.Contains(e, substr) {
			return true
		}
	}
	return false
}

// setFinalizers rewrites a VM's finalizers, retrying when the controller
// wrote the VM in between.
func (w *world) setFinalizers(name string, change func([]string) []string) {
	w.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vm := w.vm(name)
		vm.Finalizers = change(vm.Finalizers)
		_, err := w.hf.VMs.Update(vm)
		return err
	})
	if err != nil {
		w.t.Fatal(err)
	}
}

// keyCreates counts the SSH keys DigitalOcean registered. A VM's own key is
// deleted there once its droplet exists, so the live keys say less.
func (w *world) keyCreates() int {
	return w.do.RequestCounts()[fakedo.RouteCreateKey+" 201"]
}
