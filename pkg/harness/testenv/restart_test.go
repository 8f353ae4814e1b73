package testenv

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Data survives an apiserver restart (it lives in etcd), the same clients keep working,
// and so does the controller-manager (its garbage collector still collects).
func TestRestartAPIServer(t *testing.T) {
	env := Require(t)
	ns := env.NewNamespace(t)
	ctx := testContext(t)
	kube, _ := clients(t, env)

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "survivor"}, Data: map[string]string{"k": "v"}}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	if err := env.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("apiserver restarted in %s", time.Since(start).Round(time.Millisecond))

	list, err := kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, item := range list.Items {
		found = found || item.Name == "survivor"
	}
	if !found {
		t.Errorf("configmap lost across restart; have %d items", len(list.Items))
	}

	owner, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dependent", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
	}}}}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, dependent, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := kube.CoreV1().ConfigMaps(ns).Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(ctx, t, func(ctx context.Context) error {
		_, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, dependent.Name, metav1.GetOptions{})
		return err
	})
}
