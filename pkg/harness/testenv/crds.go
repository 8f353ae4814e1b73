package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

const fieldManager = "testenv"

// createDelayWindow: kube-apiserver holds every create of a custom resource for 2 s while
// its CRD's Established condition is less than 2 s old (so HA apiservers can catch up).
// Waiting that out once here keeps the first create of each test fast.
const createDelayWindow = 2*time.Second + 100*time.Millisecond

// InstallCRDs server-side applies the CRDs (field manager "testenv", forced) and waits
// until each is Established, every served version answers a list, and creates are no
// longer held back by the apiserver, i.e. until clients can really use them.
func (e *Env) InstallCRDs(ctx context.Context, crds ...*apiextensionsv1.CustomResourceDefinition) error {
	createsFastAt, err := e.applyCRDs(ctx, crds)
	if err != nil {
		return err
	}
	return sleepUntil(ctx, createsFastAt)
}

// applyCRDs does InstallCRDs up to listing, and returns when creates will be fast.
func (e *Env) applyCRDs(ctx context.Context, crds []*apiextensionsv1.CustomResourceDefinition) (time.Time, error) {
	var createsFastAt time.Time
	cfg := e.Config()
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return createsFastAt, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return createsFastAt, err
	}
	for _, crd := range crds {
		body, err := applyBody(crd)
		if err != nil {
			return createsFastAt, err
		}
		force := true
		_, err = client.ApiextensionsV1().CustomResourceDefinitions().Patch(ctx, crd.Name,
			types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: fieldManager, Force: &force})
		if err != nil {
			return createsFastAt, fmt.Errorf("testenv: apply CRD %s: %w", crd.Name, err)
		}
	}
	return waitAllUsable(ctx, client, dyn, crds)
}

// WaitCRDsUsable waits, as InstallCRDs does, until CRDs that something else
// created (another installer's plain creates, say) are usable.
func WaitCRDsUsable(ctx context.Context, cfg *rest.Config, crds ...*apiextensionsv1.CustomResourceDefinition) error {
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	createsFastAt, err := waitAllUsable(ctx, client, dyn, crds)
	if err != nil {
		return err
	}
	return sleepUntil(ctx, createsFastAt)
}

// waitAllUsable waits until every CRD is usable and returns when creates will be fast.
func waitAllUsable(ctx context.Context, client apiextensionsclient.Interface, dyn dynamic.Interface,
	crds []*apiextensionsv1.CustomResourceDefinition) (time.Time, error) {
	var createsFastAt time.Time
	for _, crd := range crds {
		establishedAt, err := waitCRDUsable(ctx, client, dyn, crd)
		if err != nil {
			return createsFastAt, fmt.Errorf("testenv: CRD %s not usable: %w", crd.Name, err)
		}
		if t := establishedAt.Add(createDelayWindow); t.After(createsFastAt) {
			createsFastAt = t
		}
	}
	return createsFastAt, nil
}

func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// applyBody is the CRD as an apply configuration: only the fields we own, no status
// or server-set metadata, and the type meta apply requires.
func applyBody(crd *apiextensionsv1.CustomResourceDefinition) ([]byte, error) {
	c := crd.DeepCopy()
	c.TypeMeta = metav1.TypeMeta{APIVersion: apiextensionsv1.SchemeGroupVersion.String(), Kind: "CustomResourceDefinition"}
	c.ObjectMeta = metav1.ObjectMeta{Name: crd.Name, Labels: crd.Labels, Annotations: crd.Annotations}
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	delete(obj, "status")
	if meta, ok := obj["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	return json.Marshal(obj)
}

// waitCRDUsable returns when the CRD became Established.
func waitCRDUsable(ctx context.Context, client apiextensionsclient.Interface, dyn dynamic.Interface,
	crd *apiextensionsv1.CustomResourceDefinition) (time.Time, error) {
	var last error
	var establishedAt time.Time
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true,
		func(ctx context.Context) (bool, error) {
			got, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
			if err != nil {
				last = err
				return false, nil
			}
			cond := establishedCondition(got)
			if cond == nil {
				last = fmt.Errorf("not Established: %+v", got.Status.Conditions)
				return false, nil
			}
			for _, v := range got.Spec.Versions {
				if !v.Served {
					continue
				}
				gvr := schema.GroupVersionResource{Group: got.Spec.Group, Version: v.Name, Resource: got.Spec.Names.Plural}
				if _, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
					last = fmt.Errorf("list %s: %w", gvr, err)
					return false, nil
				}
			}
			establishedAt = cond.LastTransitionTime.Time
			return true, nil
		})
	if err != nil && last != nil {
		return establishedAt, fmt.Errorf("%w (last: %v)", err, last)
	}
	return establishedAt, err
}

func establishedCondition(crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinitionCondition {
	for i, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return &crd.Status.Conditions[i]
		}
	}
	return nil
}
