package reliability

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/app"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/app/apptest"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/crds"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const tokenSecretName = "do-token"

// Every fake here limits each token to ratePerWindow requests per rateWindow
// (DigitalOcean's 250 per minute, with a 10 s "minute" so tests reach it),
// and the controller's clients pace themselves 10% under it, as they do
// under DigitalOcean's real limits (see clientLimits).
const (
	ratePerWindow = 250
	rateWindow    = 10 * time.Second
	ratePerHour   = 1000000
)

var scaledLimits = fakedo.RateLimits{PerMinute: ratePerWindow, Minute: rateWindow, PerHour: ratePerHour}

// clientLimits are the fake's limits, as the controller is told them.
var clientLimits = digitalocean.LimiterOptions{Limits: []digitalocean.RateLimit{
	{Requests: ratePerWindow, Window: rateWindow}, {Requests: ratePerHour, Window: time.Hour}}}

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{CRDs: allCRDs()})
}

func allCRDs() []*apiextensionsv1.CustomResourceDefinition {
	ours, err := crds.Objects()
	if err != nil {
		panic(err)
	}
	return append(testenv.HobbyFarmCRDs(), ours...)
}

// world is one test's namespace, fake DigitalOcean and running controller.
type world struct {
	t     *testing.T
	ns    string
	token string
	do    *fakedo.Server
	cfg   *rest.Config
	hf    *gargantuasim.Clients
	drops provcontrollers.DropletClient
	keys  provcontrollers.KeyClient
	kube  kubernetes.Interface

	// app is how the controller runs; kubeconfig, an admin kubeconfig, is
	// for a controller run as a process (see startProcess).
	app        app.Options
	kubeconfig string
}

type worldOptions struct {
	// env is a private control plane; nil means the shared one.
	env          *testenv.Env
	fake         fakedo.Options
	bootResync   time.Duration
	activeResync time.Duration
	workers      int
	// sweepInterval and orphanGrace are the orphan sweep's; 0 keeps the app's defaults.
	sweepInterval, orphanGrace time.Duration
	// noController leaves starting the controller to the test, e.g. as a
	// process it can kill (see startProcess).
	noController bool
}

// newToken is unique per test, so a grep for it finds only this test's leaks.
func newToken() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "dop_v1_reliability_" + hex.EncodeToString(b)
}

func newWorld(t *testing.T, o worldOptions) *world {
	t.Helper()
	env := o.env
	if env == nil {
		env = testenv.Require(t)
	}
	w := &world{t: t, ns: env.NewNamespace(t), token: newToken(), cfg: env.Config(), kubeconfig: env.KubeconfigPath}

	if o.fake.RateLimits == (fakedo.RateLimits{}) {
		o.fake.RateLimits = scaledLimits
	}
	if o.fake.BootDelay == 0 {
		o.fake.BootDelay = 500 * time.Millisecond
	}
	o.fake.SSH = true // the reachability check logs in before a VM runs
	w.do = fakedo.New(o.fake)
	if err := w.do.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.do.Close)
	// Room for duplicates, so a duplicate shows up as such and not as a 422.
	w.do.AddAccount(w.token, fakedo.AccountOptions{DropletLimit: 500})

	var err error
	if w.hf, err = gargantuasim.NewClients(w.cfg); err != nil {
		t.Fatal(err)
	}
	prov, err := provisioning.NewFactoryFromConfig(w.cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.drops = prov.Provisioning().V1alpha1().Droplet()
	w.keys = prov.Provisioning().V1alpha1().Key()
	if w.kube, err = kubernetes.NewForConfig(w.cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hf.Secrets.Create(gargantuasim.TokenSecret(w.ns, tokenSecretName, w.token)); err != nil {
		t.Fatal(err)
	}

	if o.bootResync == 0 {
		o.bootResync = 500 * time.Millisecond
	}
	if o.activeResync == 0 {
		o.activeResync = 30 * time.Second
	}
	if o.workers == 0 {
		o.workers = 4
	}
	w.app = app.Options{
		Config: w.cfg, Namespace: w.ns, APIURL: w.do.URL(), Workers: o.workers,
		BootResync: o.bootResync, ActiveResync: o.activeResync, RateLimits: clientLimits,
		SSHPort: w.do.SSHPort(), SweepInterval: o.sweepInterval, OrphanGrace: o.orphanGrace,
		// Deleted VMs' keys go a second after their droplets' deletes pause.
		KeyDeleteDelay: time.Second,
	}
	if o.noController {
		return w
	}
	apptest.Start(t, w.app)
	return w
}

// env creates the "ubuntu" template and a valid Environment using specifics.
func (w *world) env(name string, specifics map[string]string) *hfv1.Environment {
	w.t.Helper()
	tmpl := gargantuasim.Template(w.ns, "ubuntu", "ubuntu-22-04-x64", nil)
	if _, err := w.hf.Templates.Create(tmpl); err != nil && !apierrors.IsAlreadyExists(err) {
		w.t.Fatal(err)
	}
	env, err := w.hf.Envs.Create(gargantuasim.Environment(w.ns, name, specifics,
		map[string]map[string]string{"ubuntu": {"size": "s-1vcpu-1gb"}}))
	if err != nil {
		w.t.Fatal(err)
	}
	return env
}

// standardEnv reads the token from the token Secret.
func (w *world) standardEnv(name string) *hfv1.Environment {
	return w.env(name, map[string]string{"region": "nyc1", "token-secret": tokenSecretName})
}

func (w *world) createVMs(env *hfv1.Environment, prefix string, n int) []string {
	w.t.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%02d", prefix, i)
		if _, err := w.hf.CreateVM(w.ns, names[i], env, "ubuntu", "digitalocean"); err != nil {
			w.t.Fatal(err)
		}
	}
	return names
}

// eventually polls cond until it returns "" (done) or timeout, failing with its last word.
func (w *world) eventually(timeout time.Duration, what string, cond func() string) {
	w.t.Helper()
	if last := poll(timeout, cond); last != "" {
		w.t.Fatalf("%s: not done after %v: %s", what, timeout, last)
	}
}

func poll(timeout time.Duration, cond func() string) string {
	deadline := time.Now().Add(timeout)
	for {
		last := cond()
		if last == "" || time.Now().After(deadline) {
			return last
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func (w *world) waitRunning(timeout time.Duration, names ...string) {
	w.t.Helper()
	w.eventually(timeout, "VMs running", func() string {
		list, err := w.hf.VMs.List(w.ns, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		byName := map[string]hfv1.VirtualMachine{}
		for _, vm := range list.Items {
			byName[vm.Name] = vm
		}
		var notYet []string
		for _, n := range names {
			vm, ok := byName[n]
			if !ok || vm.Status.Status != hfv1.VmStatusRunning || vm.Status.PublicIP == "" {
				notYet = append(notYet, fmt.Sprintf("%s=%q", n, vm.Status.Status))
			}
		}
		if len(notYet) > 0 {
			return fmt.Sprintf("%d of %d not running: %s", len(notYet), len(names), strings.Join(first(notYet, 8), " "))
		}
		return ""
	})
}

func (w *world) deleteVMs(names ...string) {
	w.t.Helper()
	for _, n := range names {
		if err := w.hf.VMs.Delete(w.ns, n, nil); err != nil && !apierrors.IsNotFound(err) {
			w.t.Fatal(err)
		}
	}
}

// waitAllGone waits until DigitalOcean holds nothing of this world's and no
// VM, Droplet, Key or provisioner Secret is left in the namespace.
func (w *world) waitAllGone(timeout time.Duration) {
	w.t.Helper()
	w.eventually(timeout, "everything deleted", func() string {
		if d, k := len(w.do.Droplets(w.token)), len(w.do.Keys(w.token)); d+k > 0 {
			return fmt.Sprintf("DigitalOcean still holds %d droplets and %d keys", d, k)
		}
		vms, err := w.hf.VMs.List(w.ns, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		drops, err := w.drops.List(w.ns, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		keys, err := w.keys.List(w.ns, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		secrets, err := w.hf.Secrets.List(w.ns, metav1.ListOptions{LabelSelector: labels.Set{"hobbyfarm.io/provisioner": "digitalocean"}.String()})
		if err != nil {
			return err.Error()
		}
		if n := len(vms.Items) + len(drops.Items) + len(keys.Items) + len(secrets.Items); n > 0 {
			return fmt.Sprintf("%d VMs, %d Droplets, %d Keys, %d Secrets left", len(vms.Items), len(drops.Items), len(keys.Items), len(secrets.Items))
		}
		return ""
	})
}

// appliedCreates counts the droplet and key creates DigitalOcean applied,
// whether or not their answer reached the controller. Unlike a sample of
// live droplets, it also sees a duplicate that was made and later deleted.
func (w *world) appliedCreates() (droplets, keys int) {
	for _, r := range w.do.Requests() {
		switch {
		case r.Pattern == fakedo.RouteCreateDroplets && r.Status == 202:
			droplets++
		case r.Pattern == fakedo.RouteCreateKey && r.Status == 201:
			keys++
		}
	}
	return droplets, keys
}

// perVM groups the live droplets by the VM they serve: by their name, in
// their namespace (a droplet's name is its VM's, and no tag names the VM).
func perVM(droplets []dropletView) map[string][]int {
	out := map[string][]int{}
	for _, d := range droplets {
		vm := strings.Join(append(digitalocean.PlaceTags(d.tags), d.name), "/")
		out[vm] = append(out[vm], d.id)
	}
	return out
}

type dropletView struct {
	id   int
	name string
	tags []string
}

func (w *world) liveDroplets() []dropletView {
	var out []dropletView
	for _, d := range w.do.Droplets(w.token) {
		out = append(out, dropletView{id: d.ID, name: d.Name, tags: d.Tags})
	}
	return out
}

// dupWatch samples DigitalOcean every interval and remembers every moment a
// VM was served by more than one live droplet.
type dupWatch struct {
	*sampler
	mu      sync.Mutex
	samples int
	dups    []string
	maxLive int
}

func (w *world) watchDuplicates(interval time.Duration) *dupWatch {
	d := &dupWatch{}
	d.sampler = w.sample(interval, func() {
		live := w.liveDroplets()
		d.mu.Lock()
		defer d.mu.Unlock()
		d.samples++
		d.maxLive = max(d.maxLive, len(live))
		for vm, ids := range perVM(live) {
			if len(ids) > 1 {
				d.dups = append(d.dups, fmt.Sprintf("%s: droplets %v", vm, ids))
			}
		}
	})
	return d
}

// sampler runs a function every interval in its own goroutine until
// halted, at the latest when the test ends.
type sampler struct{ stop, done chan struct{} }

func (w *world) sample(interval time.Duration, f func()) *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			f()
			select {
			case <-s.stop:
				return
			case <-time.After(interval):
			}
		}
	}()
	w.t.Cleanup(s.halt)
	return s
}

// halt stops the sampling and waits for the sample under way.
func (s *sampler) halt() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
}

// check fails t if any sample saw a duplicate.
func (d *dupWatch) check(t *testing.T) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.dups) > 0 {
		t.Errorf("%d of %d samples saw a VM with more than one droplet, e.g. %s", len(d.dups), d.samples, strings.Join(first(d.dups, 5), "; "))
	}
	if d.samples < 3 {
		t.Errorf("only %d duplicate samples taken", d.samples)
	}
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// counts renders RequestCounts sorted, for logs.
func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %-40s %d", k, m[k])
	}
	return b.String()
}
