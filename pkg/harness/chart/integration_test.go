package chart

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

const fieldManager = "helm-test"

var (
	vmGVR       = schema.GroupVersionResource{Group: "hobbyfarm.io", Version: "v1", Resource: "virtualmachines"}
	dropletGVR  = schema.GroupVersionResource{Group: "provisioning.hobbyfarm.io", Version: "v1alpha1", Resource: "droplets"}
	keyGVR      = schema.GroupVersionResource{Group: "provisioning.hobbyfarm.io", Version: "v1alpha1", Resource: "keys"}
	warmPoolGVR = schema.GroupVersionResource{Group: "provisioning.hobbyfarm.io", Version: "v1alpha1", Resource: "warmpools"}
	crdGVR      = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// warnings collects the apiserver's warning headers (PodSecurity reports there).
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list
	w.list = nil
	return out
}

// applier server-side-applies rendered manifests with the dynamic client.
type applier struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newApplier(t *testing.T, cfg *rest.Config) *applier {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &applier{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))}
}

// resource maps a manifest to its namespaced resource client; ok is false when the
// server does not serve the kind.
func (a *applier) resource(t *testing.T, m manifest) (dynamic.ResourceInterface, bool) {
	t.Helper()
	gvk := m.Obj.GroupVersionKind()
	mapping, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		a.mapper.Reset()
		mapping, err = a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if meta.IsNoMatchError(err) {
		return nil, false
	}
	if err != nil {
		t.Fatalf("%s: %v", m, err)
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		t.Fatalf("%s is cluster-scoped", m)
	}
	return a.dyn.Resource(mapping.Resource).Namespace(m.Obj.GetNamespace()), true
}

// apply applies every manifest without forcing, so a field owned by another manager
// is a conflict and fails the test. It returns the objects' resourceVersions.
func (a *applier) apply(ctx context.Context, t *testing.T, ms []manifest, dryRun bool) map[string]string {
	t.Helper()
	versions := map[string]string{}
	for _, m := range ms {
		if m.isHook() && !dryRun {
			continue // helm makes a hook at its event only, not at install
		}
		ri, ok := a.resource(t, m)
		if !ok {
			t.Logf("%s: the apiserver does not serve this kind; not applied", m)
			continue
		}
		body, err := json.Marshal(m.Obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		opts := metav1.PatchOptions{FieldManager: fieldManager, FieldValidation: metav1.FieldValidationStrict}
		if dryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		out, err := ri.Patch(ctx, m.Obj.GetName(), types.ApplyPatchType, body, opts)
		switch {
		case apierrors.IsConflict(err):
			t.Errorf("apply %s: conflict: %v", m, err)
			continue
		case err != nil:
			t.Fatalf("apply %s: %v", m, err)
		}
		versions[m.String()] = out.GetResourceVersion()
		for _, mf := range out.GetManagedFields() {
			if mf.Manager != fieldManager {
				t.Errorf("%s: fields also managed by %q (%s); another release touched it", m, mf.Manager, mf.Operation)
			}
		}
	}
	return versions
}

// TestTwoReleasesOnARealAPIServer applies the chart of two same-named releases in two
// namespaces and checks each ServiceAccount reaches its own namespace and nothing else.
func TestTwoReleasesOnARealAPIServer(t *testing.T) {
	env := testenv.Require(t)
	ctx := t.Context()
	nsA, nsB := env.NewNamespace(t), env.NewNamespace(t)

	admin, err := kubernetes.NewForConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	// Namespace A enforces the restricted Pod Security Standard and warns about workloads.
	psa := `{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"restricted","pod-security.kubernetes.io/enforce-version":"latest","pod-security.kubernetes.io/warn":"restricted","pod-security.kubernetes.io/warn-version":"latest"}}}`
	if _, err := admin.CoreV1().Namespaces().Patch(ctx, nsA, types.MergePatchType, []byte(psa), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	warn := &warnings{}
	cfg := env.Config()
	cfg.WarningHandlerWithContext = warn
	ap := newApplier(t, cfg)

	relA := render(t, release, nsA)
	relB := render(t, release, nsB)
	first := ap.apply(ctx, t, relA, false)
	ap.apply(ctx, t, relB, false)
	// Applying A again changes nothing: B did not touch A's objects, and apply is idempotent.
	again := ap.apply(ctx, t, relA, false)
	for obj, rv := range first {
		if again[obj] != rv {
			t.Errorf("%s: resourceVersion %s -> %s on re-apply; something else changed it", obj, rv, again[obj])
		}
	}
	for _, w := range warn.take() {
		t.Errorf("apiserver warning while applying the chart: %s", w)
	}

	// Every value set, validated strictly by the apiserver (dry run; the ServiceMonitor
	// is only applied where its CRD exists).
	ap.apply(ctx, t, render(t, "all-values", nsA, "-f", testdata(t, "all-values.yaml"),
		"--set", "grafanaDashboard.namespace="+nsB), true) // the file's "monitoring" does not exist here
	for _, w := range warn.take() {
		t.Errorf("apiserver warning for the all-values rendering: %s", w)
	}

	t.Run("pod passes restricted PodSecurity", func(t *testing.T) {
		var d appsv1.Deployment
		only(t, relA, "Deployment").into(t, &d)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "psa-check-", Namespace: nsA, Labels: d.Spec.Template.Labels},
			Spec:       d.Spec.Template.Spec,
		}
		dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
		if _, err := admin.CoreV1().Pods(nsA).Create(ctx, pod, dry); err != nil {
			t.Errorf("the chart's pod is rejected in a restricted namespace: %v", err)
		}
		// Control: the namespace does enforce, so the check above means something.
		bad := pod.DeepCopy()
		bad.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil
		if _, err := admin.CoreV1().Pods(nsA).Create(ctx, bad, dry); err == nil || !strings.Contains(err.Error(), "PodSecurity") {
			t.Errorf("a pod allowing privilege escalation was not rejected by PodSecurity: %v", err)
		}
		// And a workload that breaks the profile does get a warning.
		escalating := render(t, release, nsA, "--set", "securityContext.allowPrivilegeEscalation=true")
		ap.apply(ctx, t, []manifest{only(t, escalating, "Deployment")}, true)
		if ws := warn.take(); !strings.Contains(strings.Join(ws, "\n"), "PodSecurity") {
			t.Errorf("no PodSecurity warning for a Deployment allowing privilege escalation (warnings: %q)", ws)
		}
	})

	sa := only(t, relA, "ServiceAccount").Obj.GetName()
	saCfg, err := env.ServiceAccountConfig(ctx, nsA, sa)
	if err != nil {
		t.Fatal(err)
	}
	asSA, err := kubernetes.NewForConfig(saCfg)
	if err != nil {
		t.Fatal(err)
	}
	dynSA, err := dynamic.NewForConfig(saCfg)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("access reviews", func(t *testing.T) {
		for _, g := range wantGrants(true) { // the default deleteTaintedVMs: true
			if !canI(t, asSA, nsA, g) {
				t.Errorf("%s in its own namespace: denied, want allowed", g)
			}
			if canI(t, asSA, nsB, g) {
				t.Errorf("%s in the other release's namespace: allowed, want denied", g)
			}
			if canI(t, asSA, "", g) {
				t.Errorf("%s across all namespaces: allowed, want denied", g)
			}
		}
		denied := []grant{
			{"hobbyfarm.io", "virtualmachines", "create"},
			{"hobbyfarm.io", "virtualmachines", "deletecollection"},
			{"hobbyfarm.io", "environments", "update"},
			{"hobbyfarm.io", "virtualmachinetemplates", "patch"},
			{"", "pods", "list"},
			{"", "pods", "create"},
			{"", "configmaps", "get"},
			{"", "serviceaccounts", "create"},
			{"", "serviceaccounts/token", "create"},
			{"", "events", "list"},
			{"apps", "deployments", "update"},
			{"rbac.authorization.k8s.io", "roles", "create"},
			{"rbac.authorization.k8s.io", "rolebindings", "create"},
			{"rbac.authorization.k8s.io", "roles", "escalate"},
			{"rbac.authorization.k8s.io", "roles", "bind"},
		}
		for _, g := range denied {
			if canI(t, asSA, nsA, g) {
				t.Errorf("%s in its own namespace: allowed, want denied", g)
			}
		}
		clusterScoped := []grant{
			{"", "nodes", "list"},
			{"", "namespaces", "list"},
			{"", "namespaces", "get"},
			{"", "persistentvolumes", "list"},
			{"apiextensions.k8s.io", "customresourcedefinitions", "list"},
			{"apiextensions.k8s.io", "customresourcedefinitions", "create"},
			{"rbac.authorization.k8s.io", "clusterroles", "list"},
			{"rbac.authorization.k8s.io", "clusterrolebindings", "create"},
		}
		for _, g := range clusterScoped {
			if canI(t, asSA, "", g) {
				t.Errorf("cluster-scoped %s: allowed, want denied", g)
			}
		}
	})

	t.Run("real calls", func(t *testing.T) {
		allowed := map[string]func() error{
			"list VMs": func() error {
				_, err := dynSA.Resource(vmGVR).Namespace(nsA).List(ctx, metav1.ListOptions{})
				return err
			},
			"list droplets": func() error {
				_, err := dynSA.Resource(dropletGVR).Namespace(nsA).List(ctx, metav1.ListOptions{})
				return err
			},
			"list keys": func() error {
				_, err := dynSA.Resource(keyGVR).Namespace(nsA).List(ctx, metav1.ListOptions{})
				return err
			},
			"list secrets": func() error { _, err := asSA.CoreV1().Secrets(nsA).List(ctx, metav1.ListOptions{}); return err },
			"create and delete a secret": func() error {
				s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{GenerateName: "rbac-check-"}, StringData: map[string]string{"k": "v"}}
				made, err := asSA.CoreV1().Secrets(nsA).Create(ctx, s, metav1.CreateOptions{})
				if err != nil {
					return err
				}
				return asSA.CoreV1().Secrets(nsA).Delete(ctx, made.Name, metav1.DeleteOptions{})
			},
			"list leases": func() error { _, err := asSA.CoordinationV1().Leases(nsA).List(ctx, metav1.ListOptions{}); return err },
			// As the controller deletes a tainted VM: conditional on the copy it checked.
			"delete a VM with preconditions": func() error {
				vm := &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": "hobbyfarm.io/v1", "kind": "VirtualMachine",
					"metadata": map[string]any{"generateName": "rbac-check-"},
				}}
				made, err := ap.dyn.Resource(vmGVR).Namespace(nsA).Create(ctx, vm, metav1.CreateOptions{})
				if err != nil {
					return fmt.Errorf("create the VM as admin: %w", err)
				}
				uid, rv := made.GetUID(), made.GetResourceVersion()
				return dynSA.Resource(vmGVR).Namespace(nsA).Delete(ctx, made.GetName(),
					metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
			},
		}
		for name, call := range allowed {
			if err := call(); err != nil {
				t.Errorf("%s in its own namespace: %v", name, err)
			}
		}
		forbidden := map[string]func() error{
			"list secrets in B": func() error { _, err := asSA.CoreV1().Secrets(nsB).List(ctx, metav1.ListOptions{}); return err },
			"list VMs in B": func() error {
				_, err := dynSA.Resource(vmGVR).Namespace(nsB).List(ctx, metav1.ListOptions{})
				return err
			},
			"list droplets in B": func() error {
				_, err := dynSA.Resource(dropletGVR).Namespace(nsB).List(ctx, metav1.ListOptions{})
				return err
			},
			"list all VMs":          func() error { _, err := dynSA.Resource(vmGVR).List(ctx, metav1.ListOptions{}); return err },
			"list all secrets":      func() error { _, err := asSA.CoreV1().Secrets("").List(ctx, metav1.ListOptions{}); return err },
			"list nodes":            func() error { _, err := asSA.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); return err },
			"list namespaces":       func() error { _, err := asSA.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); return err },
			"list CRDs":             func() error { _, err := dynSA.Resource(crdGVR).List(ctx, metav1.ListOptions{}); return err },
			"list pods in A":        func() error { _, err := asSA.CoreV1().Pods(nsA).List(ctx, metav1.ListOptions{}); return err },
			"get the Role it holds": func() error { _, err := asSA.RbacV1().Roles(nsA).Get(ctx, sa, metav1.GetOptions{}); return err },
		}
		for name, call := range forbidden {
			if err := call(); !apierrors.IsForbidden(err) {
				t.Errorf("%s: got %v, want Forbidden", name, err)
			}
		}
	})
}

// canI asks the apiserver whether the client's identity may do g in namespace ns
// ("" for cluster scope or all namespaces).
func canI(t *testing.T, client kubernetes.Interface, ns string, g grant) bool {
	t.Helper()
	resource, sub, _ := strings.Cut(g.Resource, "/")
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: ns, Verb: g.Verb, Group: g.Group, Resource: resource, Subresource: sub,
		},
	}}
	out, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(t.Context(), review, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SelfSubjectAccessReview %s in %q: %v", g, ns, err)
	}
	return out.Status.Allowed
}

// TestHelmInstallOnARealAPIServer runs the README's install command against the test
// apiserver: the release installs, NOTES tell how to hand over an Environment, bad
// values are refused by install too, and uninstall leaves the CRDs in place.
func TestHelmInstallOnARealAPIServer(t *testing.T) {
	env := testenv.Require(t)
	ctx := t.Context()
	ns := env.NewNamespace(t)
	kc := "--kubeconfig=" + env.KubeconfigPath

	_, errOut, err := runHelm(t, "install", release, chartDir(t), "-n", ns, kc, "--set", "workers=abc")
	if err == nil || !strings.Contains(errOut, "/workers") {
		t.Errorf("helm install with workers=abc: err %v, want a schema error naming /workers:\n%s", err, errOut)
	}

	out := mustHelm(t, "install", release, chartDir(t), "-n", ns, kc)
	for _, want := range []string{
		"hobbyfarm.io/provisioner=digitalocean",
		"kubectl -n " + ns + " annotate environments.hobbyfarm.io",
		"token-secret",
		"deploy/" + release,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("NOTES do not mention %q:\n%s", want, out)
		}
	}

	admin, err := kubernetes.NewForConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.AppsV1().Deployments(ns).Get(ctx, release, metav1.GetOptions{}); err != nil {
		t.Errorf("after helm install: %v", err)
	}
	if _, err := admin.RbacV1().RoleBindings(ns).Get(ctx, release, metav1.GetOptions{}); err != nil {
		t.Errorf("after helm install: %v", err)
	}

	// Nothing of ours exists here: the drain hook is TestUninstallDrainsTheInstallation's.
	mustHelm(t, "uninstall", release, "-n", ns, kc, "--wait=false", "--no-hooks")
	if _, err := admin.AppsV1().Deployments(ns).Get(ctx, release, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Deployment after helm uninstall: %v, want NotFound", err)
	}
	dyn, err := dynamic.NewForConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"droplets.provisioning.hobbyfarm.io", "keys.provisioning.hobbyfarm.io"} {
		if _, err := dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("CRD %s after helm uninstall: %v", name, err)
		}
	}
}
