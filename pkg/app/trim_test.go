package app

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// An informer trimmed before it starts keeps objects without managedFields
// and with everything else.
func TestTrimmedCacheKeepsNoManagedFields(t *testing.T) {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "key", Namespace: "hf", ResourceVersion: "1",
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "gargantua", Operation: metav1.ManagedFieldsOperationUpdate}}},
		Data: map[string][]byte{"private_key": []byte("pem")},
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &corev1.SecretList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: []corev1.Secret{*secret}}, nil
		},
		WatchFuncWithContext: func(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			if opts.SendInitialEvents != nil {
				// Refused, so the reflector falls back to the list above.
				return nil, errors.New("watch-list not served")
			}
			return watch.NewFake(), nil
		},
	}
	informer := cache.NewSharedIndexInformer(lw, &corev1.Secret{}, 0, cache.Indexers{})
	trimCaches(informer)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go informer.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		t.Fatal("informer never synced")
	}
	obj, ok, err := informer.GetStore().GetByKey("hf/key")
	if err != nil || !ok {
		t.Fatalf("secret not cached: %v", err)
	}
	cached := obj.(*corev1.Secret)
	if len(cached.ManagedFields) != 0 {
		t.Errorf("cached secret keeps %d managedFields entries", len(cached.ManagedFields))
	}
	if string(cached.Data["private_key"]) != "pem" {
		t.Errorf("cached secret lost its data: %v", cached.Data)
	}
}
