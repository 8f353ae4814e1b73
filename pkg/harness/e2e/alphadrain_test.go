package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha/alphatest"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/tokensecret"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/drain"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// ourFinalizerPrefix starts every finalizer this controller's handlers keep.
const ourFinalizerPrefix = "wrangler.cattle.io/hf-provisioner-digitalocean"

// TestDrainAfterATakeoverFromTheAlpha drains (as `helm uninstall` does)
// namespaces the original alpha provisioner served: one taken over by a
// running controller, with a VM of ours and a session that ended once the
// controller was stopped, and one whose controller never took anything
// over, with a leftover of a session that ended before. DigitalOcean keeps
// nothing of either, the alpha's objects are gone, no finalizer of ours or
// of the alpha's is left, and every VM goes once deleted.
func TestDrainAfterATakeoverFromTheAlpha(t *testing.T) {
	env, do := newUpgradeCluster(t)
	u := newUpgradeIn(t, env, do, "dop_v1_drain_taken_over")
	untaken := newUpgradeIn(t, env, do, "dop_v1_drain_not_taken_over")
	alphaVMs := map[string]*alphatest.Provisioned{}
	for _, name := range []string{"vm-1", "vm-2", "vm-ended"} {
		alphaVMs[name] = u.provision(name, alphatest.VMOptions{})
	}
	untaken.provision("vm-1", alphatest.VMOptions{})
	untaken.orphan(untaken.provision("vm-ended", alphatest.VMOptions{}))

	u.applyChartCRDs()
	stop := u.runController()
	u.waitTakenOver(alphaVMs)
	u.createRunning("vm-new")
	stop()
	// A session ends while no controller runs, as during an uninstall.
	u.orphan(alphaVMs["vm-ended"])

	for _, x := range []*upgrade{u, untaken} {
		if _, err := x.drain(false); err != nil {
			t.Fatalf("namespace %s: drain: %v", x.ns, err)
		}
		if s := x.snapshot(); len(s.droplets) != 0 || len(s.keys) != 0 {
			t.Errorf("namespace %s: DigitalOcean holds droplets %v and SSH keys %v after the drain, want none", x.ns, s.droplets, s.keys)
		}
		for key, o := range x.snapshot().objects {
			if o.ours() || slices.ContainsFunc(o.finalizers, isAlphaFinalizer) {
				t.Errorf("namespace %s: %s keeps finalizers %v after the drain", x.ns, key, o.finalizers)
			}
			if strings.HasPrefix(key, "droplets/") || strings.HasPrefix(key, "keys/") || strings.HasPrefix(key, "warmpools/") {
				t.Errorf("namespace %s: %s is left after the drain", x.ns, key)
			}
		}
		x.deleteAllVMs()
	}
}

// TestReleaseOnlyForARollbackToTheAlpha releases a namespace taken over
// from the alpha, for a rollback to it: refused, with nothing changed,
// while a VM created since the upgrade has a droplet of ours; once that VM
// is gone, this controller's finalizers and objects go, and nothing else:
// no request to DigitalOcean, the alpha's objects and finalizers as they
// were.
func TestReleaseOnlyForARollbackToTheAlpha(t *testing.T) {
	env, do := newUpgradeCluster(t)
	u := newUpgradeIn(t, env, do, "dop_v1_rollback")
	alphaVMs := map[string]*alphatest.Provisioned{}
	for _, name := range []string{"vm-1", "vm-2"} {
		alphaVMs[name] = u.provision(name, alphatest.VMOptions{})
	}
	u.applyChartCRDs()
	stop := u.runController()
	u.waitTakenOver(alphaVMs)
	u.createRunning("vm-new")
	newDroplet := u.droplet("vm-new").Status.DropletID
	stop()

	before := u.snapshot()
	_, err := u.drain(true)
	if err == nil {
		t.Fatal("released for a rollback while VM vm-new has a droplet of ours")
	}
	if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("VM vm-new (droplet %d)", newDroplet)) || strings.Contains(msg, "\n") ||
		strings.Contains(msg, "vm-1") || strings.Contains(msg, "vm-2") {
		t.Errorf("refusal %q does not name VM vm-new's droplet alone, on one line", msg)
	}
	if diff := before.diff(u.snapshot()); diff != "" {
		t.Errorf("the refused release changed: %s", diff)
	}

	stop = u.runController()
	if err := u.hf.VMs.Delete(u.ns, "vm-new", nil); err != nil {
		t.Fatal(err)
	}
	u.eventually(90*time.Second, "vm-new gone with its Droplet and Key", func() string {
		s := u.snapshot()
		for _, key := range []string{"virtualmachines/vm-new", "droplets/vm-new", "keys/vm-new"} {
			if _, ok := s.objects[key]; ok {
				return key + " still there"
			}
		}
		return ""
	})
	stop()

	before = u.snapshot()
	report, err := u.drain(true)
	if err != nil {
		t.Fatalf("release for a rollback: %v", err)
	}
	if !report.ReleaseOnly || report.Released == 0 {
		t.Errorf("report %+v", report)
	}
	after := u.snapshot()
	if after.requests != before.requests {
		t.Errorf("%d requests to DigitalOcean during the release, want none", after.requests-before.requests)
	}
	if !slices.Equal(after.droplets, before.droplets) || !slices.Equal(after.keys, before.keys) {
		t.Errorf("DigitalOcean holds droplets %v and keys %v after the release, want %v and %v as before", after.droplets, after.keys, before.droplets, before.keys)
	}
	for key, o := range before.objects {
		a, kept := after.objects[key]
		switch {
		case o.alpha && !kept:
			t.Errorf("the alpha's %s is gone", key)
		case o.alpha && a.resourceVersion != o.resourceVersion:
			t.Errorf("the alpha's %s changed: finalizers %v, were %v", key, a.finalizers, o.finalizers)
		case strings.HasPrefix(key, "virtualmachines/") && !slices.Equal(a.finalizers, slices.DeleteFunc(slices.Clone(o.finalizers), isOurs)):
			t.Errorf("%s has finalizers %v, want the alpha's as before (%v) without ours", key, a.finalizers, o.finalizers)
		case strings.HasPrefix(key, "virtualmachines/") && a.secretName != o.secretName:
			t.Errorf("%s has secret_name %q, want the alpha's %q", key, a.secretName, o.secretName)
		}
	}
	for _, p := range alphaVMs {
		if o := after.objects["virtualmachines/"+p.VM]; !slices.Contains(o.finalizers, alpha.VMFinalizer) {
			t.Errorf("VM %s lost the alpha's finalizer: %v", p.VM, o.finalizers)
		}
	}
	for key, o := range after.objects {
		if o.ours() {
			t.Errorf("%s keeps finalizers %v after the release", key, o.finalizers)
		}
		if !o.alpha && (strings.HasPrefix(key, "droplets/") || strings.HasPrefix(key, "keys/") || strings.HasPrefix(key, "warmpools/")) {
			t.Errorf("%s of ours is left after the release", key)
		}
	}
}

// drain runs the drain on u's namespace, its controller stopped already.
func (u *upgrade) drain(releaseOnly bool) (drain.Report, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return drain.Run(ctx, drain.Options{Config: u.env.Config(), Namespace: u.ns, APIURL: u.do.URL(),
		Poll: 100 * time.Millisecond, ReleaseOnly: releaseOnly})
}

// createRunning creates a VM of u's Environment and waits until it runs.
func (u *upgrade) createRunning(name string) {
	u.t.Helper()
	if _, err := u.hf.CreateVM(u.ns, name, u.hfe, "ubuntu", "digitalocean"); err != nil {
		u.t.Fatal(err)
	}
	u.eventually(90*time.Second, name+" running", func() string {
		if vm := u.vm(name); vm.Status.Status != hfv1.VmStatusRunning {
			return fmt.Sprintf("%s is %q", name, vm.Status.Status)
		}
		return ""
	})
}

// deleteAllVMs deletes every VM of u's namespace and waits until none is
// left.
func (u *upgrade) deleteAllVMs() {
	u.t.Helper()
	list, err := u.hf.VMs.List(u.ns, metav1.ListOptions{})
	if err != nil {
		u.t.Fatal(err)
	}
	for _, vm := range list.Items {
		if err := u.hf.VMs.Delete(u.ns, vm.Name, nil); err != nil && !apierrors.IsNotFound(err) {
			u.t.Fatal(err)
		}
	}
	u.eventually(time.Minute, "every VM of "+u.ns+" gone once deleted", func() string {
		left, err := u.hf.VMs.List(u.ns, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		if len(left.Items) > 0 {
			return fmt.Sprintf("%d VMs left, e.g. %s with finalizers %v", len(left.Items), left.Items[0].Name, left.Items[0].Finalizers)
		}
		return ""
	})
}

// state is what a drain may change of one object.
type state struct {
	resourceVersion string
	finalizers      []string
	// alpha: one of the alpha's Droplets or Keys (it names its VM in spec.machine).
	alpha bool
	// secretName is a VM's spec.secret_name.
	secretName string
}

func (s state) ours() bool { return slices.ContainsFunc(s.finalizers, isOurs) }

func isOurs(f string) bool {
	return strings.HasPrefix(f, ourFinalizerPrefix) || f == tokensecret.InUseFinalizer
}

func isAlphaFinalizer(f string) bool {
	return f == alpha.VMFinalizer || f == alpha.DropletFinalizer || f == alpha.KeyFinalizer
}

// snapshot is u's namespace and DigitalOcean account at one moment.
type snapshot struct {
	// objects by "<resource>/<name>".
	objects        map[string]state
	droplets, keys []int
	requests       int
}

var snapshotResources = []schema.GroupVersionResource{
	hfv1.SchemeGroupVersion.WithResource("virtualmachines"),
	{Version: "v1", Resource: "secrets"},
	v1alpha1.SchemeGroupVersion.WithResource("droplets"),
	v1alpha1.SchemeGroupVersion.WithResource("keys"),
	v1alpha1.SchemeGroupVersion.WithResource("warmpools"),
}

func (u *upgrade) snapshot() snapshot {
	u.t.Helper()
	dyn, err := dynamic.NewForConfig(u.env.Config())
	if err != nil {
		u.t.Fatal(err)
	}
	s := snapshot{objects: map[string]state{}}
	for _, gvr := range snapshotResources {
		list, err := dyn.Resource(gvr).Namespace(u.ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			u.t.Fatal(err)
		}
		for _, item := range list.Items {
			machine, _, _ := unstructured.NestedString(item.Object, "spec", "machine")
			secret, _, _ := unstructured.NestedString(item.Object, "spec", "secret_name")
			s.objects[gvr.Resource+"/"+item.GetName()] = state{resourceVersion: item.GetResourceVersion(),
				finalizers: item.GetFinalizers(), alpha: machine != "", secretName: secret}
		}
	}
	for _, d := range u.do.Droplets(u.token) {
		s.droplets = append(s.droplets, d.ID)
	}
	for _, k := range u.do.Keys(u.token) {
		s.keys = append(s.keys, k.ID)
	}
	hash := fakedo.TokenHash(u.token)
	for _, r := range u.do.Requests() {
		if r.TokenHash == hash {
			s.requests++
		}
	}
	return s
}

// diff says how after differs from s, or "".
func (s snapshot) diff(after snapshot) string {
	var out []string
	if after.requests != s.requests {
		out = append(out, fmt.Sprintf("%d requests to DigitalOcean", after.requests-s.requests))
	}
	if !slices.Equal(after.droplets, s.droplets) || !slices.Equal(after.keys, s.keys) {
		out = append(out, fmt.Sprintf("DigitalOcean droplets %v and keys %v, were %v and %v", after.droplets, after.keys, s.droplets, s.keys))
	}
	for _, key := range slices.Sorted(maps.Keys(s.objects)) {
		a, ok := after.objects[key]
		if !ok || a.resourceVersion != s.objects[key].resourceVersion {
			out = append(out, fmt.Sprintf("%s (finalizers %v, were %v)", key, a.finalizers, s.objects[key].finalizers))
		}
	}
	return strings.Join(out, "; ")
}
