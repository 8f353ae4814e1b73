package testenv

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

var (
	vmGVR  = schema.GroupVersionResource{Group: "hobbyfarm.io", Version: "v1", Resource: "virtualmachines"}
	envGVR = schema.GroupVersionResource{Group: "hobbyfarm.io", Version: "v1", Resource: "environments"}
)

func clients(t *testing.T, env *Env) (*kubernetes.Clientset, *dynamic.DynamicClient) {
	t.Helper()
	kube, err := kubernetes.NewForConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	return kube, dyn
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	t.Cleanup(cancel)
	return ctx
}
