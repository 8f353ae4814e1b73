package alphatest

import (
	"context"
	"encoding/json"
	"fmt"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
)

// Resources the alpha wrote.
var (
	dropletsResource = schema.GroupVersionResource{Group: "provisioning.hobbyfarm.io", Version: "v1alpha1", Resource: "droplets"}
	keysResource     = schema.GroupVersionResource{Group: "provisioning.hobbyfarm.io", Version: "v1alpha1", Resource: "keys"}
	secretsResource  = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	vmsResource      = hfv1.SchemeGroupVersion.WithResource("virtualmachines")
	envsResource     = hfv1.SchemeGroupVersion.WithResource("environments")
)

// kube writes as the alpha's controller did: every write by its field
// manager, objects as raw JSON through the dynamic client.
type kube struct {
	dyn dynamic.Interface
	ns  string
}

func (k kube) res(gvr schema.GroupVersionResource) dynamic.ResourceInterface {
	return k.dyn.Resource(gvr).Namespace(k.ns)
}

// create creates obj (a map from withApplied) as a kind of gvr.
func (k kube) create(ctx context.Context, gvr schema.GroupVersionResource, kind string, obj map[string]any) error {
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion(gvr.GroupVersion().String())
	u.SetKind(kind)
	_, err := k.res(gvr).Create(ctx, u, metav1.CreateOptions{FieldManager: alpha.FieldManager})
	return err
}

// writeStatus writes status with a whole-object update of the status
// subresource, as the alpha's Status().Update did.
func (k kube) writeStatus(ctx context.Context, gvr schema.GroupVersionResource, name string, status any) error {
	m, err := toMap(status)
	if err != nil {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := k.res(gvr).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		u.Object["status"] = m
		_, err = k.res(gvr).UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: alpha.FieldManager})
		return err
	})
}

// addFinalizer appends finalizer to the object's finalizers, keeping the
// others, as baaah's FinalizeFunc did on first sight of an object.
func (k kube) addFinalizer(ctx context.Context, gvr schema.GroupVersionResource, name, finalizer string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := k.res(gvr).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		finalizers := u.GetFinalizers()
		for _, f := range finalizers {
			if f == finalizer {
				return nil
			}
		}
		return k.mergePatch(ctx, gvr, name, map[string]any{"metadata": map[string]any{
			"finalizers":      append(finalizers, finalizer),
			"resourceVersion": u.GetResourceVersion(),
		}})
	})
}

// mergePatch applies a JSON merge patch; subresources name e.g. "status".
func (k kube) mergePatch(ctx context.Context, gvr schema.GroupVersionResource, name string, patch map[string]any, subresources ...string) error {
	b, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	_, err = k.res(gvr).Patch(ctx, name, types.MergePatchType, b,
		metav1.PatchOptions{FieldManager: alpha.FieldManager}, subresources...)
	return err
}

// getTyped reads an object into a typed struct.
func (k kube) getTyped(ctx context.Context, gvr schema.GroupVersionResource, name string, into any) error {
	u, err := k.res(gvr).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading %s %s/%s: %w", gvr.Resource, k.ns, name, err)
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}
