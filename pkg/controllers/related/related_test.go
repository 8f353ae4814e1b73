package related

import (
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	fcache "k8s.io/client-go/tools/cache/testing"
)

func TestOnWriteSkipsResyncsOfUnchangedObjects(t *testing.T) {
	source := fcache.NewFakeControllerSource()
	// A short resync period delivers updates of unchanged objects, as a
	// controller looking at an object again does.
	informer := cache.NewSharedIndexInformer(source, &corev1.Secret{}, 20*time.Millisecond, cache.Indexers{})
	var mu sync.Mutex
	calls := map[string]int{}
	OnWrite(informer, func(namespace, name string) {
		mu.Lock()
		defer mu.Unlock()
		calls[namespace+"/"+name]++
	})
	count := func(key string) int {
		mu.Lock()
		defer mu.Unlock()
		return calls[key]
	}
	stop := make(chan struct{})
	defer close(stop)
	go informer.Run(stop)

	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}
	source.Add(s)
	waitFor(t, func() bool { return count("ns/a") == 1 })
	time.Sleep(200 * time.Millisecond) // several resync periods
	if n := count("ns/a"); n != 1 {
		t.Fatalf("%d calls after resyncs of an unchanged object, want 1 (the add)", n)
	}
	source.Modify(s.DeepCopy())
	waitFor(t, func() bool { return count("ns/a") == 2 })
	source.Delete(s.DeepCopy())
	waitFor(t, func() bool { return count("ns/a") == 3 })
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
