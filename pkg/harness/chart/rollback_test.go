package chart

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/finalizer"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/tokensecret"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// TestRollbackToTheAlphaRelease follows docs/runbook.md's "Rolling back to
// the original provisioner" on a release upgraded from the alpha chart, with
// a VM taken over: its step 2, the drain with the runbook's args run as the
// pod it makes (the controller's ServiceAccount, no other rights), releases
// this controller's objects and keeps the alpha's; `helm rollback` to the
// alpha's revision then puts back its Deployment and ClusterRole.
func TestRollbackToTheAlphaRelease(t *testing.T) {
	env := testenv.Require(t)
	ctx := t.Context()
	ns := env.NewNamespace(t)
	kc := "--kubeconfig=" + env.KubeconfigPath
	alphaDeployment := installAlpha(t, env, ns)
	mustHelm(t, "upgrade", release, chartDir(t), "-n", ns, kc)
	bin := buildController(t)
	takenOver(t, env, ns, "vm-1", 11, 21)

	admin, err := kubernetes.NewForConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	d, err := admin.AppsV1().Deployments(ns).Get(ctx, release, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := corev1.PodSpec{ServiceAccountName: d.Spec.Template.Spec.ServiceAccountName,
		Containers: []corev1.Container{{Args: runbookRollbackArgs(t, ns)}}}
	p := startPod(t, "rollback", bin, ns, pod, env)
	select {
	case <-p.exited:
	case <-time.After(2 * time.Minute):
		t.Fatal("the release for a rollback did not end in 2 minutes")
	}
	if p.err != nil {
		t.Fatalf("drain --release-only as the controller's ServiceAccount: %v\n%s", p.err, p.logs.String())
	}

	dyn, err := dynamic.NewForConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	resources := map[string]schema.GroupVersionResource{"vm": vmGVR, "droplet": dropletGVR, "key": keyGVR,
		"secret": {Version: "v1", Resource: "secrets"}}
	finalizers := func(kind, name string) []string {
		t.Helper()
		u, err := dyn.Resource(resources[kind]).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return []string{"<gone>"}
		}
		if err != nil {
			t.Fatal(err)
		}
		return u.GetFinalizers()
	}
	for _, c := range []struct {
		kind, name string
		want       []string
	}{
		{"vm", "vm-1", []string{alpha.VMFinalizer}},
		{"droplet", alpha.DropletName("vm-1"), []string{alpha.DropletFinalizer}},
		{"key", alpha.KeyName("vm-1"), []string{alpha.KeyFinalizer}},
		{"droplet", "vm-1", []string{"<gone>"}},
		{"key", "vm-1", []string{"<gone>"}},
		{"secret", "do-token", nil},
	} {
		if got := finalizers(c.kind, c.name); !slices.Equal(got, c.want) {
			t.Errorf("%s %s after the release: finalizers %v, want %v", c.kind, c.name, got, c.want)
		}
	}

	mustHelm(t, "rollback", release, "1", "-n", ns, kc)
	got, err := admin.AppsV1().Deployments(ns).Get(ctx, release, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img, want := got.Spec.Template.Spec.Containers[0].Image, alphaDeployment.Spec.Template.Spec.Containers[0].Image; img != want {
		t.Errorf("after helm rollback the Deployment runs %s, want the alpha's %s", img, want)
	}
	if _, err := admin.RbacV1().ClusterRoles().Get(ctx, release, metav1.GetOptions{}); err != nil {
		t.Errorf("the alpha's ClusterRole after helm rollback: %v", err)
	}
}

// runbookRollbackArgs are the drain's args in the runbook's step 2, for
// namespace ns.
func runbookRollbackArgs(t *testing.T, ns string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(chartDir(t), "..", "..", "docs", "runbook.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if _, args, ok := strings.Cut(line, "-- drain --release-only"); ok {
			return append([]string{"drain", "--release-only"}, strings.Fields(strings.ReplaceAll(args, "$NS", ns))...)
		}
	}
	t.Fatal("docs/runbook.md has no `-- drain --release-only` command")
	return nil
}

// takenOver writes what a takeover of VM vm leaves, as the controller and
// the alpha wrote it: the VM with both finalizers, the alpha's Droplet and
// Key recording droplet dropletID and key keyID, held by its finalizers, our
// Droplet and Key adopting them, held by ours, and the token Secret in use.
func takenOver(t *testing.T, env *testenv.Env, ns, vm string, dropletID, keyID int) {
	t.Helper()
	ctx := t.Context()
	hf, err := gargantuasim.NewClients(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	secret := gargantuasim.TokenSecret(ns, "do-token", "dop_v1_rollback")
	secret.Finalizers = []string{tokensecret.InUseFinalizer}
	if _, err := hf.Secrets.Create(secret); err != nil {
		t.Fatal(err)
	}
	e, err := hf.Envs.Create(gargantuasim.Environment(ns, "alpha-env",
		map[string]string{"region": "nyc1", "token-secret": "do-token"}, map[string]map[string]string{"ubuntu": {"size": "s-1vcpu-1gb"}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hf.CreateVM(ns, vm, e, "ubuntu", "digitalocean"); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": []string{
		alpha.VMFinalizer, finalizer.Of(finalizer.VMCleanupHandler)}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(vmGVR).Namespace(ns).Patch(ctx, vm, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, o := range []struct {
		obj    map[string]any
		status map[string]any
	}{
		{map[string]any{"kind": "Droplet", "metadata": map[string]any{"name": alpha.DropletName(vm), "finalizers": []string{alpha.DropletFinalizer}},
			"spec": map[string]any{"machine": vm}}, map[string]any{"droplet": map[string]any{"id": dropletID}}},
		{map[string]any{"kind": "Key", "metadata": map[string]any{"name": alpha.KeyName(vm), "finalizers": []string{alpha.KeyFinalizer}},
			"spec": map[string]any{"machine": vm, "secret": alpha.SecretName(vm)}}, map[string]any{"key": map[string]any{"id": keyID}}},
		{map[string]any{"kind": "Droplet", "metadata": map[string]any{"name": vm, "finalizers": []string{finalizer.Of(finalizer.DropletCleanupHandler)}},
			"spec": map[string]any{"virtualMachine": vm, "name": alpha.DropletName(vm), "adoptedDropletID": dropletID}}, nil},
		{map[string]any{"kind": "Key", "metadata": map[string]any{"name": vm, "finalizers": []string{finalizer.Of(finalizer.KeyCleanupHandler)}},
			"spec": map[string]any{"name": alpha.KeyName(vm), "adoptedKeyID": keyID}}, nil},
	} {
		gvr := dropletGVR
		if o.obj["kind"] == "Key" {
			gvr = keyGVR
		}
		o.obj["apiVersion"] = v1alpha1.SchemeGroupVersion.String()
		created, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: o.obj}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if o.status == nil {
			continue
		}
		created.Object["status"] = o.status
		if _, err := dyn.Resource(gvr).Namespace(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}
