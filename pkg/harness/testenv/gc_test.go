package testenv

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The garbage collector deletes dependents of a deleted owner, as in a real cluster.
func TestGarbageCollectorDeletesDependents(t *testing.T) {
	env := Require(t)
	ns := env.NewNamespace(t)
	ctx := testContext(t)
	kube, dyn := clients(t, env)

	t.Run("configmap", func(t *testing.T) {
		cms := kube.CoreV1().ConfigMaps(ns)
		owner, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: "dependent",
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
			}},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := cms.Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitGone(ctx, t, func(ctx context.Context) error {
			_, err := cms.Get(ctx, "dependent", metav1.GetOptions{})
			return err
		})
	})

	t.Run("hobbyfarm virtualmachine", func(t *testing.T) {
		owner, err := dyn.Resource(envGVR).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "hobbyfarm.io/v1", "kind": "Environment",
			"metadata": map[string]any{"name": "env-1"},
			"spec":     map[string]any{"provider": "digitalocean"},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		vm := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "hobbyfarm.io/v1", "kind": "VirtualMachine",
			"metadata": map[string]any{"name": "vm-owned"},
			"spec":     map[string]any{"vm_template_id": "ubuntu"},
		}}
		vm.SetOwnerReferences([]metav1.OwnerReference{{
			APIVersion: "hobbyfarm.io/v1", Kind: "Environment", Name: owner.GetName(), UID: owner.GetUID(),
		}})
		vms := dyn.Resource(vmGVR).Namespace(ns)
		if _, err := vms.Create(ctx, vm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := dyn.Resource(envGVR).Namespace(ns).Delete(ctx, owner.GetName(), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitGone(ctx, t, func(ctx context.Context) error {
			_, err := vms.Get(ctx, "vm-owned", metav1.GetOptions{})
			return err
		})
	})
}

func waitGone(ctx context.Context, t *testing.T, get func(context.Context) error) {
	t.Helper()
	start := time.Now()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true,
		func(ctx context.Context) (bool, error) {
			err := get(ctx)
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, nil
		})
	if err != nil {
		t.Fatalf("dependent still there after %s: %v", time.Since(start).Round(time.Millisecond), err)
	}
	t.Logf("garbage collected after %s", time.Since(start).Round(time.Millisecond))
}
