package chart

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// The alpha provisioner's chart was installed as release hf-provisioner-digitalocean
// from the same chart path as this one, so `helm upgrade` meets its releases and its
// values files. testdata/alpha-chart is that chart and testdata/alpha-values.yaml its
// values.yaml, as the alpha published them.

// alphaHeader starts the message that refuses the alpha's values.
const alphaHeader = "values of the alpha chart this chart refuses, one line each"

// alphaRefusals are the keys of testdata/alpha-values.yaml that this chart refuses,
// each with what its line must say: the value to set instead, or that it goes and
// what takes its place. Every other key of that file means the same here.
func alphaRefusals(t *testing.T) map[string][]string {
	return map[string][]string{
		"replicaCount":          {"set replicas: 1 instead"},
		"autoscaling":           {"remove it", "replicas sets the pod count"},
		"serviceAccount.create": {"remove it", "always creates its ServiceAccount, " + release},
		"serviceAccount.name":   {"remove it", release},
		"image.repository":      {"remove it", image.Repository},
		"image.tag":             {"remove it", "appVersion, " + appVersion(t)},
	}
}

func appVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(chartDir(t), "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(data, &chart); err != nil {
		t.Fatal(err)
	}
	return chart.AppVersion
}

// alphaLines returns the lines of helm's error that refuse an alpha value, by key.
func alphaLines(t *testing.T, errOut string) map[string][]string {
	t.Helper()
	lines := strings.Split(errOut, "\n")
	start := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, alphaHeader) })
	if start < 0 {
		t.Fatalf("helm's error does not refuse alpha values:\n%s", errOut)
	}
	if strings.Contains(errOut, "values don't meet the specifications of the schema") {
		t.Errorf("the schema refused the alpha values before the chart could say what replaces them:\n%s", errOut)
	}
	byKey := map[string][]string{}
	for _, l := range lines[start+1:] {
		if !strings.HasPrefix(l, "  ") {
			break
		}
		key, _, ok := strings.Cut(strings.TrimSpace(l), ": ")
		if !ok {
			t.Errorf("line %q does not start with the key it refuses", l)
			continue
		}
		byKey[key] = append(byKey[key], l)
	}
	return byKey
}

// checkAlphaLines: helm's error has one line for each key of want, and no other,
// each saying all that want lists for its key.
func checkAlphaLines(t *testing.T, errOut string, want map[string][]string) {
	t.Helper()
	got := alphaLines(t, errOut)
	for key, says := range want {
		switch lines := got[key]; len(lines) {
		case 0:
			t.Errorf("no line refuses %s:\n%s", key, errOut)
		case 1:
			for _, s := range says {
				if !strings.Contains(lines[0], s) {
					t.Errorf("the line refusing %s does not say %q: %s", key, s, lines[0])
				}
			}
		default:
			t.Errorf("%d lines refuse %s, want one: %q", len(lines), key, lines)
		}
	}
	for key, lines := range got {
		if _, ok := want[key]; !ok {
			t.Errorf("unexpected line refusing %s: %q", key, lines)
		}
	}
}

// fixedAlphaValues writes testdata/alpha-values.yaml changed as its refusal lines
// say, and returns its path.
func fixedAlphaValues(t *testing.T) string {
	t.Helper()
	v := readValues(t, testdata(t, "alpha-values.yaml"))
	v["replicas"] = v["replicaCount"]
	delete(v, "replicaCount")
	delete(v, "autoscaling")
	sa := v["serviceAccount"].(map[string]any)
	delete(sa, "create")
	delete(sa, "name")
	img := v["image"].(map[string]any)
	delete(img, "repository")
	delete(img, "tag")
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "fixed-alpha-values.yaml")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// alphaRenderErr runs helm template for the alpha's release name, expecting failure,
// and returns helm's error output.
func alphaRenderErr(t *testing.T, args ...string) string {
	t.Helper()
	all := append([]string{"template", release, chartDir(t), "--namespace", "team-a"}, args...)
	out, errOut, err := runHelm(t, all...)
	if err == nil {
		t.Fatalf("helm %s succeeded, want an error; it rendered:\n%s", strings.Join(all, " "), out)
	}
	return errOut
}

// TestAlphaValuesRefusedWithTheirReplacement: a values file copied from the alpha's
// values.yaml fails with one line for each key this chart does not take (past the
// schema, which would name none of the replacements), each saying what to set
// instead; changed as the lines say, it asks for nothing but this chart's defaults.
func TestAlphaValuesRefusedWithTheirReplacement(t *testing.T) {
	checkAlphaLines(t, alphaRenderErr(t, "-f", testdata(t, "alpha-values.yaml")), alphaRefusals(t))

	// Each key alone, with a value of its own: its line only.
	for name, tc := range map[string]struct {
		values string
		want   map[string][]string
	}{
		"replicaCount": {"replicaCount: 3", map[string][]string{"replicaCount": {"set replicas: 3"}}},
		"autoscaling on": {"autoscaling:\n  enabled: true\n  maxReplicas: 5",
			map[string][]string{"autoscaling": {"remove it"}}},
		"an existing ServiceAccount": {"serviceAccount:\n  create: false",
			map[string][]string{"serviceAccount.create": {"remove it", "always creates its ServiceAccount, " + release}}},
		"a ServiceAccount name": {"serviceAccount:\n  name: hfdo",
			map[string][]string{"serviceAccount.name": {"remove it", release}}},
		"the alpha's repository, spelt out": {"image:\n  repository: docker.io/hobbyfarm/hf-provisioner-digitalocean",
			map[string][]string{"image.repository": {"docker.io/hobbyfarm/hf-provisioner-digitalocean", image.Repository}}},
		"the alpha's tag from a mirror": {"image:\n  repository: registry.example.com/hobbyfarm/hf-provisioner-digitalocean\n  tag: v0.0.1",
			map[string][]string{"image.tag": {"v0.0.1", "remove it"}}},
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "values.yaml")
			if err := os.WriteFile(p, []byte(tc.values+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			checkAlphaLines(t, alphaRenderErr(t, "-f", p), tc.want)
		})
	}

	// Keys the two charts share, and null alpha keys (Helm's way to unset), pass.
	shared := filepath.Join(t.TempDir(), "shared.yaml")
	if err := os.WriteFile(shared, []byte("replicaCount: null\nautoscaling: null\nserviceAccount:\n  name: null\n"+
		"image:\n  repository: registry.example.com/hf-provisioner-digitalocean\n  tag: \"0.1.0\"\n  pullPolicy: Always\n"+
		"imagePullSecrets: [{name: regcred}]\nnameOverride: hfdo\npodAnnotations: {a: b}\n"+
		"podSecurityContext: {fsGroup: 2000}\nsecurityContext: {}\nresources: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	m := only(t, render(t, release, "team-a", "-f", shared), "Deployment")
	m.into(t, &d)
	c, psc := controller(t, &d), d.Spec.Template.Spec.SecurityContext
	if c.Image != "registry.example.com/hf-provisioner-digitalocean:0.1.0" || c.ImagePullPolicy != corev1.PullAlways ||
		len(d.Spec.Template.Spec.ImagePullSecrets) != 1 || d.Spec.Selector.MatchLabels["app.kubernetes.io/name"] != "hfdo" ||
		d.Spec.Template.Annotations["a"] != "b" || psc == nil || psc.FSGroup == nil || *psc.FSGroup != 2000 {
		t.Errorf("values the alpha shares with this chart do not work as here:\n%s", m.YAML)
	}
	checkRestricted(t, &d.Spec.Template.Spec)

	// Changed as the lines say, the alpha's file renders exactly the defaults: its
	// empty podSecurityContext, securityContext and resources merge over this chart's.
	if got, want := mustHelm(t, "template", release, chartDir(t), "-n", "team-a", "-f", fixedAlphaValues(t)),
		mustHelm(t, "template", release, chartDir(t), "-n", "team-a"); got != want {
		t.Errorf("the fixed alpha values render differently from the defaults:\n%s", got)
	}
}

// TestUpgradeFromTheAlphaRelease installs the alpha chart as release
// hf-provisioner-digitalocean and upgrades it to this chart. Installed without values,
// as the alpha's README says, it upgrades with none. Installed with a copy of its
// values.yaml, the upgrade with that file, or with none (Helm then reuses it), is
// refused, one line per key, and changes nothing; with the file changed as those
// lines say, it goes through. Either way the Deployment (its selector unchanged: it
// is immutable), ServiceAccount, Role and RoleBinding are then this chart's, and the
// alpha's ClusterRole and ClusterRoleBinding, which this controller does not need,
// are gone.
func TestUpgradeFromTheAlphaRelease(t *testing.T) {
	env := testenv.Require(t)
	// One at a time: the alpha's ClusterRole and ClusterRoleBinding have fixed names.
	t.Run("installed without values", func(t *testing.T) {
		ns := env.NewNamespace(t)
		alpha := installAlpha(t, env, ns)
		mustHelm(t, "upgrade", release, chartDir(t), "-n", ns, "--kubeconfig="+env.KubeconfigPath)
		checkUpgradedFromAlpha(t, env, ns, alpha)
	})
	t.Run("installed with its values.yaml", func(t *testing.T) {
		ns := env.NewNamespace(t)
		kc := "--kubeconfig=" + env.KubeconfigPath
		alphaValues := testdata(t, "alpha-values.yaml")
		alpha := installAlpha(t, env, ns, "-f", alphaValues)
		for name, args := range map[string][]string{
			"its values file":         {"-f", alphaValues},
			"no values, reusing them": nil,
		} {
			t.Run("refused with "+name, func(t *testing.T) {
				_, errOut, err := runHelm(t, append([]string{"upgrade", release, chartDir(t), "-n", ns, kc}, args...)...)
				if err == nil {
					t.Fatal("helm upgrade of the alpha release with the alpha's values succeeded")
				}
				checkAlphaLines(t, errOut, alphaRefusals(t))
			})
		}
		admin, err := kubernetes.NewForConfig(env.Config())
		if err != nil {
			t.Fatal(err)
		}
		if d, err := admin.AppsV1().Deployments(ns).Get(t.Context(), release, metav1.GetOptions{}); err != nil || d.ResourceVersion != alpha.ResourceVersion {
			t.Errorf("a refused upgrade changed the alpha's Deployment (%v)", err)
		}
		fixed := fixedAlphaValues(t)
		mustHelm(t, "upgrade", release, chartDir(t), "-n", ns, kc, "-f", fixed)
		checkUpgradedFromAlpha(t, env, ns, alpha, "-f", fixed)
	})
}

// installAlpha installs the alpha chart as release hf-provisioner-digitalocean and
// returns its Deployment.
func installAlpha(t *testing.T, env *testenv.Env, ns string, args ...string) *appsv1.Deployment {
	t.Helper()
	admin, err := kubernetes.NewForConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	// Its cluster-scoped objects outlive the namespace when the upgrade fails.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := admin.RbacV1().ClusterRoleBindings().Delete(ctx, release, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: %v", err)
		}
		if err := admin.RbacV1().ClusterRoles().Delete(ctx, release, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleanup: %v", err)
		}
	})
	mustHelm(t, append([]string{"install", release, testdata(t, "alpha-chart"), "-n", ns, "--kubeconfig=" + env.KubeconfigPath}, args...)...)
	if _, err := admin.RbacV1().ClusterRoles().Get(t.Context(), release, metav1.GetOptions{}); err != nil {
		t.Fatalf("the alpha release made no ClusterRole: %v", err)
	}
	d, err := admin.AppsV1().Deployments(ns).Get(t.Context(), release, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// checkUpgradedFromAlpha: after the upgrade from the alpha release, the release's
// objects are this chart's rendered with args, the Deployment kept the alpha's
// selector, and the alpha's cluster-scoped objects are gone.
func checkUpgradedFromAlpha(t *testing.T, env *testenv.Env, ns string, alpha *appsv1.Deployment, args ...string) {
	t.Helper()
	ctx := t.Context()
	admin, err := kubernetes.NewForConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	ms := render(t, release, ns, args...)

	var want appsv1.Deployment
	only(t, ms, "Deployment").into(t, &want)
	got, err := admin.AppsV1().Deployments(ns).Get(ctx, want.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Spec.Selector, alpha.Spec.Selector) {
		t.Errorf("selector %v, the alpha's was %v", got.Spec.Selector, alpha.Spec.Selector)
	}
	if !matches(want.Labels, got.Labels) || !matches(want.Spec.Template.Labels, got.Spec.Template.Labels) {
		t.Errorf("Deployment labels %v, pod labels %v: want this chart's %v, %v", got.Labels, got.Spec.Template.Labels, want.Labels, want.Spec.Template.Labels)
	}
	if n := len(got.Spec.Template.Spec.Containers); n != 1 {
		t.Errorf("Deployment has %d containers, want this chart's one: %+v", n, got.Spec.Template.Spec.Containers)
	} else if c, w := got.Spec.Template.Spec.Containers[0], controller(t, &want); c.Name != w.Name || c.Image != w.Image || !slices.Equal(c.Args, w.Args) {
		t.Errorf("container %s %s %q, want this chart's %s %s %q", c.Name, c.Image, c.Args, w.Name, w.Image, w.Args)
	}
	if sa := got.Spec.Template.Spec.ServiceAccountName; sa != want.Spec.Template.Spec.ServiceAccountName {
		t.Errorf("pods run as %q, want %q", sa, want.Spec.Template.Spec.ServiceAccountName)
	}

	var wantSA corev1.ServiceAccount
	only(t, ms, "ServiceAccount").into(t, &wantSA)
	if sa, err := admin.CoreV1().ServiceAccounts(ns).Get(ctx, wantSA.Name, metav1.GetOptions{}); err != nil {
		t.Error(err)
	} else if !matches(wantSA.Labels, sa.Labels) {
		t.Errorf("ServiceAccount labels %v, want this chart's %v", sa.Labels, wantSA.Labels)
	}
	var wantRole rbacv1.Role
	only(t, ms, "Role").into(t, &wantRole)
	if role, err := admin.RbacV1().Roles(ns).Get(ctx, wantRole.Name, metav1.GetOptions{}); err != nil {
		t.Error(err)
	} else if !reflect.DeepEqual(role.Rules, wantRole.Rules) {
		t.Errorf("Role rules %+v, want this chart's %+v", role.Rules, wantRole.Rules)
	}
	var wantRB rbacv1.RoleBinding
	only(t, ms, "RoleBinding").into(t, &wantRB)
	if rb, err := admin.RbacV1().RoleBindings(ns).Get(ctx, wantRB.Name, metav1.GetOptions{}); err != nil {
		t.Error(err)
	} else if rb.RoleRef != wantRB.RoleRef || !reflect.DeepEqual(rb.Subjects, wantRB.Subjects) || !matches(wantRB.Labels, rb.Labels) {
		t.Errorf("RoleBinding %+v %+v, want this chart's %+v %+v", rb.RoleRef, rb.Subjects, wantRB.RoleRef, wantRB.Subjects)
	}
	if _, err := admin.RbacV1().ClusterRoles().Get(ctx, release, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the alpha's ClusterRole after the upgrade: %v, want NotFound", err)
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Get(ctx, release, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the alpha's ClusterRoleBinding after the upgrade: %v, want NotFound", err)
	}
	status := mustHelm(t, "status", release, "-n", ns, "--kubeconfig="+env.KubeconfigPath)
	if !strings.Contains(status, "STATUS: deployed") || !strings.Contains(status, "REVISION: 2") {
		t.Errorf("helm status after the upgrade:\n%s", status)
	}
}

// TestAlphaObjectsBecomeThisChartsInPlace: rendered for the same release, this
// chart's objects that share a kind and name with the alpha's keep what the
// apiserver does not let an update change (a Deployment's selector, a RoleBinding's
// roleRef), so `helm upgrade` updates them in place. With the alpha's defaults every
// namespaced alpha object has its counterpart here; its ClusterRole and
// ClusterRoleBinding have none, so the upgrade deletes them.
func TestAlphaObjectsBecomeThisChartsInPlace(t *testing.T) {
	for name, set := range map[string]string{
		"defaults":         "",
		"nameOverride":     "nameOverride=hfdo",
		"fullnameOverride": "fullnameOverride=hfdo-all",
	} {
		t.Run(name, func(t *testing.T) {
			var args []string
			if set != "" {
				args = []string{"--set", set}
			}
			alpha := parseManifests(t, mustHelm(t, append([]string{"template", release, testdata(t, "alpha-chart"), "-n", "team-a"}, args...)...))
			ours := map[string]manifest{}
			for _, m := range render(t, release, "team-a", args...) {
				if !m.isHook() {
					ours[m.Obj.GetKind()+"/"+m.Obj.GetName()] = m
				}
			}
			for _, a := range alpha {
				kind := a.Obj.GetKind()
				m, ok := ours[kind+"/"+a.Obj.GetName()]
				switch {
				case kind == "ClusterRole" || kind == "ClusterRoleBinding":
					continue
				case !ok && name == "defaults":
					t.Errorf("alpha %s %s has no counterpart here", kind, a.Obj.GetName())
				case !ok:
				case kind == "Deployment":
					var ad, d appsv1.Deployment
					a.into(t, &ad)
					m.into(t, &d)
					if !reflect.DeepEqual(ad.Spec.Selector, d.Spec.Selector) {
						t.Errorf("Deployment %s: selector %v, the alpha's %v (immutable)", d.Name, d.Spec.Selector, ad.Spec.Selector)
					}
				case kind == "RoleBinding":
					var arb, rb rbacv1.RoleBinding
					a.into(t, &arb)
					m.into(t, &rb)
					if arb.RoleRef != rb.RoleRef {
						t.Errorf("RoleBinding %s: roleRef %+v, the alpha's %+v (immutable)", rb.Name, rb.RoleRef, arb.RoleRef)
					}
				}
			}
		})
	}
}
