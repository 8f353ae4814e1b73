package drain

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/finalizer"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/tokensecret"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
)

var secretsGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// releaseRule says what release takes off the objects of one resource.
type releaseRule struct {
	gvr schema.GroupVersionResource
	// only, when set, picks the objects the rule applies to; the others
	// are left as they are.
	only func(*unstructured.Unstructured) bool
	// remove picks the finalizers to remove.
	remove func(string) bool
	// annotations to remove: ours, and naming what no longer exists.
	annotations []string
	// del: the objects describe what DigitalOcean no longer holds, or what
	// no controller will act on any more.
	del bool
}

func isInUse(f string) bool { return f == tokensecret.InUseFinalizer }

// anyOf picks the finalizers that one of picks picks.
func anyOf(picks ...func(string) bool) func(string) bool {
	return func(f string) bool { return slices.ContainsFunc(picks, func(p func(string) bool) bool { return p(f) }) }
}

func named(name string) func(string) bool { return func(f string) bool { return f == name } }

// drainRules, once DigitalOcean holds nothing of the installation: the
// Droplets, Keys and WarmPools go, the alpha's with ours, each losing its
// finalizer; VMs keep all that is Gargantua's (finalizer.hobbyfarm.io/vmset
// included), so Gargantua can delete them, and lose ours and the alpha's;
// token Secrets lose the finalizer that held them for cleanups.
var drainRules = []releaseRule{
	{gvr: dropletsGVR, remove: anyOf(finalizer.Ours, named(alpha.DropletFinalizer)), del: true},
	{gvr: keysGVR, remove: anyOf(finalizer.Ours, named(alpha.KeyFinalizer)), del: true},
	{gvr: warmPoolsGVR, remove: finalizer.Ours, del: true},
	{gvr: vmsGVR, remove: anyOf(finalizer.Ours, named(alpha.VMFinalizer)), annotations: []string{v1alpha1.KnownDropletAnnotation}},
	{gvr: secretsGVR, remove: isInUse},
}

// rollbackRules release this controller's hold only: the alpha's Droplets,
// Keys and finalizers stay, for the alpha to delete what they record.
var rollbackRules = []releaseRule{
	{gvr: dropletsGVR, only: notAlpha(alpha.IsDroplet), remove: finalizer.Ours, del: true},
	{gvr: keysGVR, only: notAlpha(alpha.IsKey), remove: finalizer.Ours, del: true},
	{gvr: warmPoolsGVR, remove: finalizer.Ours, del: true},
	{gvr: vmsGVR, remove: finalizer.Ours, annotations: []string{v1alpha1.KnownDropletAnnotation}},
	{gvr: secretsGVR, remove: isInUse},
}

// notAlpha picks the objects that isAlpha does not report as the alpha's.
// One that cannot be read is left alone.
func notAlpha[T any](isAlpha func(*T) bool) func(*unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		obj := new(T)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
			return false
		}
		return !isAlpha(obj)
	}
}

// release applies rules to the namespace, then checks that no object they
// pick keeps a finalizer they remove. It returns how many objects lost one.
func release(ctx context.Context, k kube, namespace string, rules []releaseRule) (int, error) {
	released := 0
	for _, rule := range rules {
		ri := k.dyn.Resource(rule.gvr).Namespace(namespace)
		items, err := ri.List(ctx, metav1.ListOptions{})
		if err != nil {
			return released, fmt.Errorf("listing %s: %w", rule.gvr.Resource, err)
		}
		for i := range items.Items {
			if rule.only != nil && !rule.only(&items.Items[i]) {
				continue
			}
			changed, err := strip(ctx, ri, &items.Items[i], rule)
			if err != nil {
				return released, fmt.Errorf("%s %s: %w", rule.gvr.Resource, items.Items[i].GetName(), err)
			}
			if changed {
				released++
			}
			if !rule.del {
				continue
			}
			if err := ri.Delete(ctx, items.Items[i].GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return released, fmt.Errorf("deleting %s %s: %w", rule.gvr.Resource, items.Items[i].GetName(), err)
			}
		}
	}
	return released, checkReleased(ctx, k, namespace, rules)
}

// strip removes rule's finalizers and annotations from obj with a merge patch
// conditional on obj's resourceVersion, so that a finalizer someone else added
// meanwhile is never written away; on a conflict it reads obj again.
func strip(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, rule releaseRule) (changed bool, err error) {
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		keep := slices.DeleteFunc(slices.Clone(obj.GetFinalizers()), rule.remove)
		annotations := map[string]any{}
		for _, a := range rule.annotations {
			if _, ok := obj.GetAnnotations()[a]; ok {
				annotations[a] = nil
			}
		}
		changed = len(keep) != len(obj.GetFinalizers())
		if !changed && len(annotations) == 0 {
			return nil
		}
		meta := map[string]any{"resourceVersion": obj.GetResourceVersion(), "finalizers": keep}
		if len(annotations) > 0 {
			meta["annotations"] = annotations
		}
		body, err := json.Marshal(map[string]any{"metadata": meta})
		if err != nil {
			return err
		}
		_, err = ri.Patch(ctx, obj.GetName(), types.MergePatchType, body, metav1.PatchOptions{})
		if apierrors.IsConflict(err) {
			if fresh, getErr := ri.Get(ctx, obj.GetName(), metav1.GetOptions{}); getErr == nil {
				*obj = *fresh
			} else if apierrors.IsNotFound(getErr) {
				changed = false
				return nil
			}
		}
		if apierrors.IsNotFound(err) {
			changed = false
			return nil
		}
		return err
	})
	return changed, err
}

// checkReleased fails when an object of the namespace still has a finalizer
// rules remove: something wrote one back, and its deletion would hang.
func checkReleased(ctx context.Context, k kube, namespace string, rules []releaseRule) error {
	for _, rule := range rules {
		items, err := k.dyn.Resource(rule.gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("listing %s: %w", rule.gvr.Resource, err)
		}
		for _, item := range items.Items {
			if rule.only != nil && !rule.only(&item) {
				continue
			}
			if slices.ContainsFunc(item.GetFinalizers(), rule.remove) {
				return fmt.Errorf("%s %s still has finalizers %v after the drain released them", rule.gvr.Resource, item.GetName(), item.GetFinalizers())
			}
		}
	}
	return nil
}
