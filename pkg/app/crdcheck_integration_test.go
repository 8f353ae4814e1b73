package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/app"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// These tests change the CRDs the apiserver serves, so each starts a control
// plane of its own.

const alphaToken = "dop_v1_crdcheck"

// alphaCRDs are the original alpha provisioner's Droplet and Key CRDs as it
// installed them: the same names as ours, a schema declaring no field and
// pruning nothing, short name drop for Droplet.
func alphaCRDs() []*apiextv1.CustomResourceDefinition {
	preserve := true
	crd := func(kind, plural string, shortNames ...string) *apiextv1.CustomResourceDefinition {
		return &apiextv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: plural + ".provisioning.hobbyfarm.io"},
			Spec: apiextv1.CustomResourceDefinitionSpec{
				Group: "provisioning.hobbyfarm.io",
				Scope: apiextv1.NamespaceScoped,
				Names: apiextv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural,
					Singular: strings.ToLower(kind), ShortNames: shortNames},
				Versions: []apiextv1.CustomResourceDefinitionVersion{{Name: "v1alpha1", Served: true, Storage: true,
					Subresources: &apiextv1.CustomResourceSubresources{Status: &apiextv1.CustomResourceSubresourceStatus{}},
					Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
						Type: "object", XPreserveUnknownFields: &preserve}}}},
			},
		}
	}
	return []*apiextv1.CustomResourceDefinition{crd("Droplet", "droplets", "drop"), crd("Key", "keys")}
}

// alphaWorld is a control plane serving the alpha's CRDs, a namespace with a
// token, an Environment and a VM for this provisioner, and a fake DigitalOcean.
type alphaWorld struct {
	env   *testenv.Env
	ns    string
	do    *fakedo.Server
	hf    *gargantuasim.Clients
	kube  kubernetes.Interface
	dyn   dynamic.Interface
	vm    *hfv1.VirtualMachine
	hfEnv *hfv1.Environment
}

func newAlphaWorld(t *testing.T) *alphaWorld {
	t.Helper()
	env := testenv.New(t, testenv.Options{CRDs: testenv.HobbyFarmCRDs()})
	w := &alphaWorld{env: env, ns: env.NewNamespace(t)}
	ctx := t.Context()
	var err error
	if w.kube, err = kubernetes.NewForConfig(env.Config()); err != nil {
		t.Fatal(err)
	}
	if w.dyn, err = dynamic.NewForConfig(env.Config()); err != nil {
		t.Fatal(err)
	}
	// As the alpha's controller created them: by its own name, no apply.
	ext, err := apiextclient.NewForConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range alphaCRDs() {
		if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd,
			metav1.CreateOptions{FieldManager: alpha.FieldManager}); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, 60*time.Second, "the alpha's CRDs served", func() string {
		for _, r := range []string{"droplets", "keys"} {
			if _, err := w.dyn.Resource(gvr(r)).Namespace(w.ns).List(ctx, metav1.ListOptions{}); err != nil {
				return err.Error()
			}
		}
		return ""
	})

	w.do = fakedo.New(fakedo.Options{BootDelay: 200 * time.Millisecond, SSH: true})
	if err := w.do.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.do.Close)
	w.do.AddAccount(alphaToken, fakedo.AccountOptions{})
	if w.hf, err = gargantuasim.NewClients(env.Config()); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hf.Secrets.Create(gargantuasim.TokenSecret(w.ns, "do-token", alphaToken)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hf.Templates.Create(gargantuasim.Template(w.ns, "ubuntu", "ubuntu-22-04-x64", nil)); err != nil {
		t.Fatal(err)
	}
	if w.hfEnv, err = w.hf.Envs.Create(gargantuasim.Environment(w.ns, "do-env",
		map[string]string{"region": "nyc1", "token-secret": "do-token"},
		map[string]map[string]string{"ubuntu": {"size": "s-1vcpu-1gb"}})); err != nil {
		t.Fatal(err)
	}
	if w.vm, err = w.hf.CreateVM(w.ns, "vm-1", w.hfEnv, "ubuntu", "digitalocean"); err != nil {
		t.Fatal(err)
	}
	return w
}

func gvr(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "provisioning.hobbyfarm.io", Version: "v1alpha1", Resource: resource}
}

// controllerIdentity makes a ServiceAccount that may do anything in the
// namespace and nothing beyond it (no CRD rights, as under the chart), and
// the Pod the controller runs as.
func (w *alphaWorld) controllerIdentity(t *testing.T) (*corev1.Pod, app.Options) {
	t.Helper()
	ctx := t.Context()
	const sa = "controller"
	cfg, err := w.env.ServiceAccountConfig(ctx, w.ns, sa)
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: w.ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}
	if _, err := w.kube.RbacV1().Roles(w.ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: w.ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: sa},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: w.ns}}}
	if _, err := w.kube.RbacV1().RoleBindings(w.ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// No kubelet runs it: it only stands for the pod whose Events operators read.
	pod, err := w.kube.CoreV1().Pods(w.ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "hf-provisioner-digitalocean-0", Namespace: w.ns},
		Spec: corev1.PodSpec{ServiceAccountName: sa,
			Containers: []corev1.Container{{Name: "controller", Image: "hobbyfarm/hf-provisioner-digitalocean"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod, app.Options{Config: cfg, Namespace: w.ns, Pod: app.PodRef{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID}}
}

// run runs the controller until the test ends.
func (w *alphaWorld) run(t *testing.T, opts app.Options) <-chan struct{} {
	t.Helper()
	opts.APIURL, opts.SSHPort, opts.BootResync = w.do.URL(), w.do.SSHPort(), 300*time.Millisecond
	ready := make(chan struct{})
	opts.Ready = ready
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, opts) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("controller: %v", err)
		}
	})
	return ready
}

// events are the Events of reason on obj, found as kubectl describe finds them.
func (w *alphaWorld) events(t *testing.T, obj *corev1.Pod, reason string) []corev1.Event {
	t.Helper()
	selector := fields.Set{"involvedObject.kind": "Pod", "involvedObject.name": obj.Name,
		"involvedObject.uid": string(obj.UID), "reason": reason}.AsSelector().String()
	list, err := w.kube.CoreV1().Events(obj.Namespace).List(t.Context(), metav1.ListOptions{FieldSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// nothingWritten says what the controller changed, "" if nothing: the VM as
// created, no Droplet, Key or other Secret, not one DigitalOcean request.
func (w *alphaWorld) nothingWritten(t *testing.T) string {
	t.Helper()
	ctx := t.Context()
	vm, err := w.hf.VMs.Get(w.ns, w.vm.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if vm.ResourceVersion != w.vm.ResourceVersion {
		return fmt.Sprintf("VM written: finalizers %v, labels %v, status %q", vm.Finalizers, vm.Labels, vm.Status.Status)
	}
	for _, r := range []string{"droplets", "keys"} {
		list, err := w.dyn.Resource(gvr(r)).Namespace(w.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) > 0 {
			return fmt.Sprintf("%s written: %s", r, list.Items[0].GetName())
		}
	}
	secrets, err := w.kube.CoreV1().Secrets(w.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets.Items {
		if s.Name != "do-token" {
			return "Secret written: " + s.Name
		}
	}
	if n := len(w.do.RequestCounts()); n > 0 {
		return fmt.Sprintf("DigitalOcean asked: %v", w.do.RequestCounts())
	}
	return ""
}

func (w *alphaWorld) vmRunning(t *testing.T) func() string {
	return func() string {
		vm, err := w.hf.VMs.Get(w.ns, w.vm.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if vm.Status.Status != hfv1.VmStatusRunning {
			return fmt.Sprintf("VM is %q", vm.Status.Status)
		}
		return ""
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// readyz is /readyz's status code and body.
func readyz(t *testing.T, addr string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// chartCRDs are the CRDs the command in the message applies.
func chartCRDs(t *testing.T) []*apiextv1.CustomResourceDefinition {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "chart", "hf-provisioner-digitalocean", "crds", "*.yaml"))
	if err != nil || len(files) != 3 {
		t.Fatalf("chart CRDs %v: %v", files, err)
	}
	var out []*apiextv1.CustomResourceDefinition
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, crd)
	}
	return out
}

// commandLines are the logged lines at warning level or above that name the
// command to run.
func commandLines(logs *logtest.Hook) []string {
	var out []string
	for _, e := range logs.AllEntries() {
		if e.Level <= logrus.WarnLevel && strings.Contains(e.Message, app.CRDsCommand) {
			out = append(out, e.Message)
		}
	}
	return out
}

// applyWithoutForce does what kubectl apply --server-side does without
// --force-conflicts: it applies each of the chart's CRDs, and the alpha's,
// managed by the alpha's controller, conflict; only the WarmPool CRD is applied.
func (w *alphaWorld) applyWithoutForce(t *testing.T) {
	t.Helper()
	ext, err := apiextclient.NewForConfig(w.env.Config())
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range chartCRDs(t) {
		crd.TypeMeta = metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"}
		body, err := json.Marshal(crd)
		if err != nil {
			t.Fatal(err)
		}
		_, err = ext.ApiextensionsV1().CustomResourceDefinitions().Patch(t.Context(), crd.Name, types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: "kubectl"})
		switch {
		case crd.Spec.Names.Kind == "WarmPool" && err != nil:
			t.Fatalf("applying %s: %v", crd.Name, err)
		case crd.Spec.Names.Kind != "WarmPool" && !apierrors.IsConflict(err):
			t.Fatalf("applying %s over the alpha's: %v, want a conflict", crd.Name, err)
		}
	}
	testutil.Eventually(t, 60*time.Second, "the WarmPool CRD served", func() string {
		if _, err := w.dyn.Resource(gvr("warmpools")).Namespace(w.ns).List(t.Context(), metav1.ListOptions{}); err != nil {
			return err.Error()
		}
		return ""
	})
}

// On the alpha's CRDs, when an upgrade's CRD step was skipped or failed on
// conflicts, the controller starts nothing, writes nothing, is not ready,
// and says once, in its log and in an Event on its Pod, what to run. Once
// this release's CRDs are applied it starts by itself and provisions the VM
// that waited.
func TestOnTheAlphasCRDsNothingStartsUntilOursAreApplied(t *testing.T) {
	for _, c := range []struct {
		name string
		// failedApply leaves the state of the command run without --force-conflicts.
		failedApply bool
	}{{"step skipped", false}, {"apply without --force-conflicts", true}} {
		t.Run(c.name, func(t *testing.T) {
			logs := logtest.NewGlobal()
			t.Cleanup(logs.Reset)
			w := newAlphaWorld(t)
			if c.failedApply {
				w.applyWithoutForce(t)
			}
			pod, opts := w.controllerIdentity(t)
			addr := freeAddr(t)
			opts.MetricsAddr, opts.CRDCheckInterval = addr, time.Second
			ready := w.run(t, opts)

			var warning corev1.Event
			testutil.Eventually(t, 90*time.Second, "a Warning CRDsNotUpgraded Event on the controller's Pod", func() string {
				if what := w.nothingWritten(t); what != "" {
					t.Fatalf("on the alpha's CRDs: %s", what)
				}
				found := w.events(t, pod, app.ReasonCRDsNotUpgraded)
				if len(found) == 0 {
					return "none yet"
				}
				warning = found[0]
				return ""
			})
			if warning.Type != corev1.EventTypeWarning || !strings.Contains(warning.Message, app.CRDsCommand) ||
				!strings.Contains(warning.Message, "Droplet and Key CRDs served are the original alpha provisioner's") {
				t.Errorf("Event %s %s: %q, want a Warning naming the alpha's CRDs and %q", warning.Type, warning.Reason, warning.Message, app.CRDsCommand)
			}
			if lines := commandLines(logs); len(lines) != 1 {
				t.Errorf("logged %d lines naming the command, want 1: %q", len(lines), lines)
			}
			if code, body := readyz(t, addr); code != http.StatusServiceUnavailable || !strings.Contains(body, app.CRDsCommand) {
				t.Errorf("/readyz: %d %q, want 503 naming the command", code, body)
			}
			select {
			case <-ready:
				t.Fatal("the controllers started on the alpha's CRDs")
			default:
			}
			if what := w.nothingWritten(t); what != "" {
				t.Fatalf("on the alpha's CRDs: %s", what)
			}

			// What the command does: server-side apply, forced, of the chart's CRDs.
			if err := w.env.InstallCRDs(t.Context(), chartCRDs(t)...); err != nil {
				t.Fatal(err)
			}
			select {
			case <-ready:
			case <-time.After(90 * time.Second):
				t.Fatal("controller not ready 90s after this release's CRDs were applied")
			}
			testutil.Eventually(t, 30*time.Second, "/readyz ok", func() string {
				if code, body := readyz(t, addr); code != http.StatusOK {
					return fmt.Sprintf("%d %s", code, body)
				}
				return ""
			})
			testutil.Eventually(t, 90*time.Second, "the VM running", w.vmRunning(t))
			testutil.Eventually(t, 30*time.Second, "a Normal CRDsUpgraded Event", func() string {
				if len(w.events(t, pod, app.ReasonCRDsUpgraded)) == 0 {
					return "none yet"
				}
				return ""
			})
			// Said once, though checked every second while waiting.
			if found := w.events(t, pod, app.ReasonCRDsNotUpgraded); len(found) != 1 || found[0].Count > 1 {
				t.Errorf("%d CRDsNotUpgraded Events, want one, recorded once", len(found))
			}
			if lines := commandLines(logs); len(lines) != 1 {
				t.Errorf("logged %d lines naming the command, want 1: %q", len(lines), lines)
			}
		})
	}
}

// --install-crds (the binary's default outside the chart) replaces the
// alpha's CRDs by update, over the alpha's field manager, before the check:
// the controller starts without a word about them.
func TestInstallCRDsReplacesTheAlphasCRDs(t *testing.T) {
	w := newAlphaWorld(t)
	ready := w.run(t, app.Options{Config: w.env.Config(), Namespace: w.ns, InstallCRDs: true, CRDCheckInterval: time.Second})
	select {
	case <-ready:
	case <-time.After(90 * time.Second):
		t.Fatal("controller not ready after 90s")
	}
	testutil.Eventually(t, 90*time.Second, "the VM running", w.vmRunning(t))
	resources, err := w.kube.Discovery().ServerResourcesForGroupVersion("provisioning.hobbyfarm.io/v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resources.APIResources {
		if r.Name == "droplets" && (len(r.ShortNames) == 0 || r.ShortNames[0] != "do-droplet") {
			t.Errorf("droplets served with short names %v, want this release's", r.ShortNames)
		}
	}
	list, err := w.kube.CoreV1().Events(w.ns).List(t.Context(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("reason", app.ReasonCRDsNotUpgraded).String()})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) > 0 {
		t.Errorf("%s Event after installing the CRDs: %s", app.ReasonCRDsNotUpgraded, list.Items[0].Message)
	}
}

// With leader election every replica checks before it joins the election:
// on the alpha's CRDs none takes the Lease, and none is ready (a standby is
// otherwise ready while a leader holds the Lease).
func TestOnTheAlphasCRDsNoReplicaLeads(t *testing.T) {
	logs := logtest.NewGlobal()
	t.Cleanup(logs.Reset)
	w := newAlphaWorld(t)
	pod, opts := w.controllerIdentity(t)
	addr := freeAddr(t)
	opts.MetricsAddr, opts.CRDCheckInterval, opts.LeaderElect = addr, time.Second, true
	opts.APIURL, opts.Ready = w.do.URL(), make(chan struct{})
	// Stopped before the CRDs are fixed: a replica that joined the election
	// exits the process when it leaves it, so one that did is left running.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, opts) }()
	defer func() {
		for _, e := range logs.AllEntries() {
			if e.Message == "waiting to lead" {
				t.Error("the replica joined the leader election on the alpha's CRDs; left running")
				return
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("controller: %v", err)
		}
	}()
	testutil.Eventually(t, 90*time.Second, "a Warning CRDsNotUpgraded Event on the controller's Pod", func() string {
		if len(w.events(t, pod, app.ReasonCRDsNotUpgraded)) == 0 {
			return "none yet"
		}
		return ""
	})
	if code, body := readyz(t, addr); code != http.StatusServiceUnavailable || !strings.Contains(body, app.CRDsCommand) {
		t.Errorf("/readyz: %d %q, want 503 naming the command", code, body)
	}
	leases, err := w.kube.CoordinationV1().Leases(w.ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(leases.Items) > 0 {
		t.Errorf("Lease %s taken on the alpha's CRDs", leases.Items[0].Name)
	}
	if what := w.nothingWritten(t); what != "" {
		t.Errorf("on the alpha's CRDs: %s", what)
	}
}
