package e2e

import (
	"context"

	"fmt"
	"github.com/digitalocean/godo"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha/alphatest"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/app"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/app/apptest"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshprobe"
	"golang.org/x/crypto/ssh"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
)

// upgrade is a namespace served by the original alpha provisioner, with
// users in sessions, about to be taken over.
type upgrade struct {
	t   *testing.T
	env *testenv.Env
	do  *fakedo.Server
	// token is the namespace's DigitalOcean token, an account of do.
	token string
	hf    *gargantuasim.Clients
	ns    string
	hfe   *hfv1.Environment
	// statuses are every status each VM had since the watch began.
	mu       sync.Mutex
	statuses map[string][]hfv1.VmStatus
}

// TestUpgradeFromTheAlphaInPlace upgrades a running alpha installation the
// way the chart README says (its CRDs applied with --force-conflicts, then
// this controller), with sessions in use, and checks that no user notices:
// every VM keeps its droplet, address and key; nothing is created for
// them; the alpha's broken VMs are reported and its duplicate keys and
// leftovers deleted; deleting a VM deletes what the alpha made, and nothing
// hangs on the alpha's finalizers; new VMs are this project's.
func TestUpgradeFromTheAlphaInPlace(t *testing.T) {
	u := newUpgrade(t)
	good := []string{"vm-good-1", "vm-good-2"}
	alphaVMs := map[string]*alphatest.Provisioned{}
	for _, name := range good {
		alphaVMs[name] = u.provision(name, alphatest.VMOptions{})
	}
	// The alpha's own races: a Secret rewritten after its droplet was made
	// (its user cannot log in), and a second key nothing records.
	rewritten := u.provision("vm-rewritten", alphatest.VMOptions{SecretRewritten: true})
	duplicate := u.provision("vm-duplicate", alphatest.VMOptions{SecretRewritten: true, DuplicateKey: true})
	// A duplicate whose key pair the alpha lost: recorded nowhere here, so
	// it may as well be another namespace's VM of the same name.
	lostPair := u.provision("vm-lost-pair", alphatest.VMOptions{DuplicateKey: true})
	alphaVMs["vm-rewritten"], alphaVMs["vm-duplicate"], alphaVMs["vm-lost-pair"] = rewritten, duplicate, lostPair
	// A session that ended while no provisioner ran (Gargantua v3.1+ strips
	// the VM's finalizers): its droplet and key are left, recorded only by
	// the alpha's objects, held by its finalizers.
	leftover := u.provision("vm-leftover", alphatest.VMOptions{})
	u.orphan(leftover)

	u.applyChartCRDs()
	u.watchStatuses()
	before := len(u.do.Requests())
	u.startController()

	w := u.eventually
	u.waitTakenOver(alphaVMs)
	w(60*time.Second, "the leftover's droplet and key deleted, its objects gone", func() string {
		return u.gone(leftover)
	})
	w(3*time.Minute, "the duplicate key deleted", func() string {
		if slices.ContainsFunc(u.do.Keys(u.token), func(k godo.Key) bool { return k.ID == duplicate.DuplicateKeyID }) {
			return fmt.Sprintf("key %d still at DigitalOcean", duplicate.DuplicateKeyID)
		}
		return ""
	})
	w(60*time.Second, "the key with a lost pair reported, not deleted", func() string {
		if !slices.ContainsFunc(u.do.Keys(u.token), func(k godo.Key) bool { return k.ID == lostPair.DuplicateKeyID }) {
			return fmt.Sprintf("key %d was deleted", lostPair.DuplicateKeyID)
		}
		if !slices.Contains(u.eventReasons("vm-lost-pair"), "UnrecordedKey") {
			return fmt.Sprintf("no UnrecordedKey Event on vm-lost-pair: %v", u.eventReasons("vm-lost-pair"))
		}
		return ""
	})
	w(60*time.Second, "the rewritten Secrets reported", func() string {
		for _, name := range []string{"vm-rewritten", "vm-duplicate"} {
			d := u.droplet(name)
			if v1alpha1.KeyPair.GetReason(d) != "KeySecretMismatch" || !v1alpha1.Reachable.IsFalse(d) {
				return fmt.Sprintf("%s: KeyPair %s/%s, Reachable %s/%s", name, v1alpha1.KeyPair.GetStatus(d), v1alpha1.KeyPair.GetReason(d),
					v1alpha1.Reachable.GetStatus(d), v1alpha1.Reachable.GetReason(d))
			}
		}
		return ""
	})
	for _, name := range append(good, "vm-lost-pair") {
		p := alphaVMs[name]
		if reason := u.login(name, p); reason != sshprobe.ReasonLoggedIn {
			t.Errorf("%s: login with the Secret spec.secret_name names: %s, want %s", name, reason, sshprobe.ReasonLoggedIn)
		}
		if d := u.droplet(name); !v1alpha1.Reachable.IsTrue(d) {
			t.Errorf("%s: Reachable %s (%s), want True", name, v1alpha1.Reachable.GetStatus(d), v1alpha1.Reachable.GetMessage(d))
		}
	}
	if creates := u.creates(before); creates != "" {
		t.Errorf("requests that create for the alpha's VMs: %s", creates)
	}

	// New VMs are this project's from the first minute.
	created, err := u.hf.CreateVM(u.ns, "vm-new", u.hfe, "ubuntu", "digitalocean")
	if err != nil {
		t.Fatal(err)
	}
	w(90*time.Second, "the new VM running", func() string {
		vm := u.vm("vm-new")
		if vm.Status.Status != hfv1.VmStatusRunning {
			return fmt.Sprintf("vm-new is %q", vm.Status.Status)
		}
		return ""
	})
	if vm := u.vm("vm-new"); vm.Spec.SecretName != created.Name+"-ssh" {
		t.Errorf("vm-new's secret_name is %q, want this project's %q", vm.Spec.SecretName, created.Name+"-ssh")
	}
	if d := u.droplet("vm-new"); d.Spec.AdoptedDropletID != 0 || d.Status.DropletID == alphaVMs["vm-good-1"].DropletID {
		t.Errorf("vm-new's Droplet adopted %d / %d", d.Spec.AdoptedDropletID, d.Status.DropletID)
	}

	// Deleting VMs the alpha provisioned deletes its droplets, and nothing
	// hangs on its finalizers.
	for _, name := range []string{"vm-good-1", "vm-rewritten"} {
		if err := u.hf.VMs.Delete(u.ns, name, nil); err != nil {
			t.Fatal(err)
		}
	}
	w(90*time.Second, "deleted alpha VMs gone with their droplets", func() string {
		for _, name := range []string{"vm-good-1", "vm-rewritten"} {
			// One read: a second could find the VM gone in between.
			if vm, err := u.hf.VMs.Get(u.ns, name, metav1.GetOptions{}); err == nil {
				return fmt.Sprintf("VM %s still there, finalizers %v", name, vm.Finalizers)
			} else if !apierrors.IsNotFound(err) {
				return err.Error()
			}
			if why := u.gone(alphaVMs[name]); why != "" {
				return why
			}
		}
		return ""
	})

	u.checkStatusesStayedRunning(append(good, "vm-rewritten", "vm-duplicate", "vm-lost-pair"))
	// What is left at DigitalOcean is exactly the live VMs' droplets.
	live := map[int]bool{}
	for _, d := range u.do.Droplets(u.token) {
		live[d.ID] = true
	}
	for _, name := range []string{"vm-good-2", "vm-duplicate", "vm-lost-pair"} {
		if !live[alphaVMs[name].DropletID] {
			t.Errorf("%s's droplet %d is gone, want it kept", name, alphaVMs[name].DropletID)
		}
	}
	if len(live) != 4 {
		t.Errorf("%d droplets at DigitalOcean, want 4 (vm-good-2's, vm-duplicate's, vm-lost-pair's, vm-new's)", len(live))
	}
	if n := u.count(before, "POST /v2/droplets"); n != 1 {
		t.Errorf("%d droplet creates since the upgrade, want 1 (vm-new's)", n)
	}
}

func newUpgrade(t *testing.T) *upgrade {
	env, do := newUpgradeCluster(t)
	return newUpgradeIn(t, env, do, testToken)
}

// newUpgradeCluster starts a control plane serving the alpha's CRDs and a
// fake DigitalOcean.
func newUpgradeCluster(t *testing.T) (*testenv.Env, *fakedo.Server) {
	// Its own control plane: the CRDs it replaces are cluster-wide.
	env := testenv.New(t, testenv.Options{CRDs: testenv.HobbyFarmCRDs()})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := alphatest.InstallCRDs(ctx, env.Config()); err != nil {
		t.Fatal(err)
	}
	do := fakedo.New(fakedo.Options{SSH: true, BootDelay: 300 * time.Millisecond})
	if err := do.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(do.Close)
	return env, do
}

// newUpgradeIn makes a namespace of env whose Environment uses token, an
// account of do.
func newUpgradeIn(t *testing.T, env *testenv.Env, do *fakedo.Server, token string) *upgrade {
	do.AddAccount(token, fakedo.AccountOptions{DropletLimit: 100})
	u := &upgrade{t: t, env: env, do: do, token: token, ns: env.NewNamespace(t), statuses: map[string][]hfv1.VmStatus{}}
	var err error
	if u.hf, err = gargantuasim.NewClients(env.Config()); err != nil {
		t.Fatal(err)
	}
	if _, err := u.hf.Secrets.Create(gargantuasim.TokenSecret(u.ns, tokenSecret, token)); err != nil {
		t.Fatal(err)
	}
	if _, err := u.hf.Templates.Create(gargantuasim.Template(u.ns, "ubuntu", "ubuntu-22-04-x64", nil)); err != nil {
		t.Fatal(err)
	}
	// The settings the alpha's README shows: the template's entry names the image.
	if u.hfe, err = u.hf.Envs.Create(gargantuasim.Environment(u.ns, "alpha-env",
		map[string]string{"region": "nyc1", "token-secret": tokenSecret},
		map[string]map[string]string{"ubuntu": {"size": "s-1vcpu-1gb", "image": "ubuntu-22-04-x64"}})); err != nil {
		t.Fatal(err)
	}
	return u
}

func (u *upgrade) writer() alphatest.Writer {
	return alphatest.Writer{Config: u.env.Config(), APIURL: u.do.URL(), Token: u.token}
}

func (u *upgrade) provision(name string, opts alphatest.VMOptions) *alphatest.Provisioned {
	u.t.Helper()
	vm, err := u.hf.CreateVM(u.ns, name, u.hfe, "ubuntu", "digitalocean")
	if err != nil {
		u.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := alphatest.Provision(ctx, u.writer(), vm, opts)
	if err != nil {
		u.t.Fatal(err)
	}
	return p
}

func (u *upgrade) orphan(p *alphatest.Provisioned) {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := alphatest.Orphan(ctx, u.writer(), p); err != nil {
		u.t.Fatal(err)
	}
}

// applyChartCRDs runs the chart README's CRD command, and waits until the
// apiserver serves the new CRDs.
func (u *upgrade) applyChartCRDs() {
	u.t.Helper()
	crds := filepath.Join("..", "..", "..", "chart", "hf-provisioner-digitalocean", "crds")
	out, err := exec.Command("kubectl", "--kubeconfig", u.env.KubeconfigPath,
		"apply", "--server-side", "--force-conflicts", "-f", crds).CombinedOutput()
	if err != nil {
		u.t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(u.env.Config())
	if err != nil {
		u.t.Fatal(err)
	}
	u.eventually(60*time.Second, "this chart's CRDs served", func() string {
		list, err := disco.ServerResourcesForGroupVersion(v1alpha1.SchemeGroupVersion.String())
		if err != nil {
			return err.Error()
		}
		served := map[string]bool{}
		for _, r := range list.APIResources {
			for _, s := range r.ShortNames {
				served[s] = true
			}
		}
		for _, want := range []string{"do-droplet", "do-key", "do-warmpool"} {
			if !served[want] {
				return "short name " + want + " not served yet"
			}
		}
		return ""
	})
}

// watchStatuses records every status the namespace's VMs go through.
func (u *upgrade) watchStatuses() {
	u.t.Helper()
	watcher, err := u.hf.VMs.Watch(u.ns, metav1.ListOptions{})
	if err != nil {
		u.t.Fatal(err)
	}
	u.t.Cleanup(watcher.Stop)
	go func() {
		for ev := range watcher.ResultChan() {
			if vm, ok := ev.Object.(*hfv1.VirtualMachine); ok && ev.Type != watch.Deleted {
				u.mu.Lock()
				u.statuses[vm.Name] = append(u.statuses[vm.Name], vm.Status.Status)
				u.mu.Unlock()
			}
		}
	}()
}

func (u *upgrade) checkStatusesStayedRunning(names []string) {
	u.t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, name := range names {
		for _, s := range u.statuses[name] {
			if s != hfv1.VmStatusRunning {
				u.t.Errorf("%s went through status %q, want running throughout (%v)", name, s, u.statuses[name])
				break
			}
		}
	}
}

func (u *upgrade) startController() {
	u.runController()
}

// runController starts the controller on the namespace and returns what
// stops it.
func (u *upgrade) runController() (stop func()) {
	return apptest.Run(u.t, app.Options{
		Config: u.env.Config(), Namespace: u.ns, APIURL: u.do.URL(), Workers: 4,
		BootResync: 300 * time.Millisecond, ActiveResync: 30 * time.Second,
		SSHPort: u.do.SSHPort(),
	})
}

func (u *upgrade) eventually(timeout time.Duration, what string, cond func() string) {
	u.t.Helper()
	testutil.Eventually(u.t, timeout, what, cond)
}

func (u *upgrade) vm(name string) *hfv1.VirtualMachine {
	u.t.Helper()
	vm, err := u.hf.VMs.Get(u.ns, name, metav1.GetOptions{})
	if err != nil {
		u.t.Fatal(err)
	}
	return vm
}

func (u *upgrade) droplet(name string) *v1alpha1.Droplet {
	u.t.Helper()
	d, err := u.provisioning().Droplet().Get(u.ns, name, metav1.GetOptions{})
	if err != nil {
		u.t.Fatal(err)
	}
	return d
}

func (u *upgrade) provisioning() provcontrollers.Interface {
	u.t.Helper()
	f, err := provisioning.NewFactoryFromConfig(u.env.Config())
	if err != nil {
		u.t.Fatal(err)
	}
	return f.Provisioning().V1alpha1()
}

// waitTakenOver waits until every VM of alphaVMs is taken over.
func (u *upgrade) waitTakenOver(alphaVMs map[string]*alphatest.Provisioned) {
	u.t.Helper()
	u.eventually(90*time.Second, "every alpha VM taken over", func() string {
		for name, p := range alphaVMs {
			if why := u.takenOver(name, p); why != "" {
				return why
			}
		}
		return ""
	})
}

// takenOver says what is missing of name's takeover, or "".
func (u *upgrade) takenOver(name string, p *alphatest.Provisioned) string {
	vm := u.vm(name)
	if vm.Status.Status != hfv1.VmStatusRunning || vm.Status.PublicIP != p.PublicIP || vm.Spec.SecretName != p.SecretName {
		return fmt.Sprintf("%s is %q at %q with Secret %q, want running at %q with %q",
			name, vm.Status.Status, vm.Status.PublicIP, vm.Spec.SecretName, p.PublicIP, p.SecretName)
	}
	prov := u.provisioning()
	d, err := prov.Droplet().Get(u.ns, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Sprintf("%s's Droplet: %v", name, err)
	}
	if d.Spec.AdoptedDropletID != p.DropletID || d.Status.DropletID != p.DropletID || d.Status.PublicIPv4 != p.PublicIP {
		return fmt.Sprintf("%s's Droplet adopted %d, records %d at %q; want %d at %q",
			name, d.Spec.AdoptedDropletID, d.Status.DropletID, d.Status.PublicIPv4, p.DropletID, p.PublicIP)
	}
	k, err := prov.Key().Get(u.ns, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Sprintf("%s's Key: %v", name, err)
	}
	if k.Spec.AdoptedKeyID != p.KeyID {
		return fmt.Sprintf("%s's Key adopted %d, want %d", name, k.Spec.AdoptedKeyID, p.KeyID)
	}
	if !slices.Contains(u.dropletTags(p.DropletID), digitalocean.InstallationTag(u.ns)) {
		return fmt.Sprintf("%s's droplet %d lacks the installation tag", name, p.DropletID)
	}
	// The alpha's record is kept as it wrote it, until its VM goes.
	a, err := prov.Droplet().Get(u.ns, alpha.DropletName(name), metav1.GetOptions{})
	if err != nil || alpha.DropletOf(a).ID != p.DropletID || !slices.Contains(a.Finalizers, alpha.DropletFinalizer) {
		return fmt.Sprintf("%s's alpha Droplet changed: %v", name, err)
	}
	return ""
}

func (u *upgrade) dropletTags(id int) []string {
	for _, d := range u.do.Droplets(u.token) {
		if d.ID == id {
			return d.Tags
		}
	}
	return nil
}

// gone says what is left of the alpha's droplet, key and objects for p.
func (u *upgrade) gone(p *alphatest.Provisioned) string {
	for _, d := range u.do.Droplets(u.token) {
		if d.ID == p.DropletID {
			return fmt.Sprintf("%s's droplet %d still at DigitalOcean", p.VM, d.ID)
		}
	}
	for _, k := range u.do.Keys(u.token) {
		if k.ID == p.KeyID {
			return fmt.Sprintf("%s's key %d still at DigitalOcean", p.VM, k.ID)
		}
	}
	prov := u.provisioning()
	if d, err := prov.Droplet().Get(u.ns, p.DropletName, metav1.GetOptions{}); err == nil {
		return fmt.Sprintf("%s's alpha Droplet still there, finalizers %v", p.VM, d.Finalizers)
	} else if !apierrors.IsNotFound(err) {
		return err.Error()
	}
	if k, err := prov.Key().Get(u.ns, p.KeyName, metav1.GetOptions{}); err == nil {
		return fmt.Sprintf("%s's alpha Key still there, finalizers %v", p.VM, k.Finalizers)
	} else if !apierrors.IsNotFound(err) {
		return err.Error()
	}
	return ""
}

// login logs in to name's droplet with the Secret its spec.secret_name
// names, as Gargantua's shell does.
func (u *upgrade) login(name string, p *alphatest.Provisioned) string {
	u.t.Helper()
	vm := u.vm(name)
	secret, err := u.hf.Secrets.Get(u.ns, vm.Spec.SecretName, metav1.GetOptions{})
	if err != nil {
		u.t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(secret.Data["private_key"])
	if err != nil {
		u.t.Fatal(err)
	}
	addr, ok := u.do.SSHAddr(u.token, p.DropletID)
	if !ok {
		return "no SSH address"
	}
	return sshprobe.Probe(context.Background(), sshprobe.Target{Addr: addr, User: "root", Signer: signer}, 20*time.Second).Reason
}

// eventReasons are the reasons of the Events on VM name.
func (u *upgrade) eventReasons(name string) []string {
	u.t.Helper()
	kube, err := kubernetes.NewForConfig(u.env.Config())
	if err != nil {
		u.t.Fatal(err)
	}
	list, err := kube.CoreV1().Events(u.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		u.t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "VirtualMachine" && e.InvolvedObject.Name == name {
			out = append(out, e.Reason)
		}
	}
	return out
}

// creates names the create requests sent since the first before.
func (u *upgrade) creates(before int) string {
	var out []string
	for _, r := range u.do.Requests()[before:] {
		if r.Pattern == "POST /v2/droplets" || r.Pattern == "POST /v2/account/keys" {
			out = append(out, r.Pattern)
		}
	}
	return strings.Join(out, ", ")
}

func (u *upgrade) count(before int, pattern string) int {
	n := 0
	for _, r := range u.do.Requests()[before:] {
		if r.Pattern == pattern {
			n++
		}
	}
	return n
}
