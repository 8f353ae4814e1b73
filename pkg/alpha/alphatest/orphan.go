package alphatest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
)

// gargantuaManager writes Gargantua's part in Orphan.
const gargantuaManager = "gargantua"

// Orphan leaves a provisioned VM's alpha objects behind their VM, as an
// upgrade meets them when a session ended while the alpha was stopped:
// Gargantua (v3.1 and later) deletes the tainted VM and then sets its
// finalizers to [], the alpha's included, so the VM is gone; the garbage
// collector then deletes what the VM owned. The Secret goes at once; the
// Key and Droplet stay, deleting, held by the alpha's finalizers, and the
// droplet and key stay at DigitalOcean. The collector's deletes are made
// here (background, with the object's UID as precondition, as it makes
// them) so that the outcome does not wait for its discovery of the CRDs.
func Orphan(ctx context.Context, w Writer, p *Provisioned) error {
	dyn, err := dynamic.NewForConfig(w.Config)
	if err != nil {
		return err
	}
	k := kube{dyn: dyn, ns: p.Namespace}
	if err := deleteAndRelease(ctx, k, p.VM); err != nil {
		return fmt.Errorf("alphatest: orphan %s/%s: %w", p.Namespace, p.VM, err)
	}
	for _, o := range []struct {
		gvr  schema.GroupVersionResource
		name string
	}{{secretsResource, p.SecretName}, {keysResource, p.KeyName}, {dropletsResource, p.DropletName}} {
		if err := collect(ctx, k, o.gvr, o.name, p.VMUID); err != nil {
			return fmt.Errorf("alphatest: orphan %s/%s: %w", p.Namespace, o.name, err)
		}
	}
	return nil
}

// deleteAndRelease is Gargantua's delete of the VM and its write of no
// finalizers, after which the VM is gone.
func deleteAndRelease(ctx context.Context, k kube, vm string) error {
	vms := k.res(vmsResource)
	if err := vms.Delete(ctx, vm, metav1.DeleteOptions{}); err != nil {
		return err
	}
	u, err := vms.Get(ctx, vm, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"finalizers": []string{}, "resourceVersion": u.GetResourceVersion()}})
	if err != nil {
		return err
	}
	if _, err := vms.Patch(ctx, vm, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: gargantuaManager}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true,
		func(ctx context.Context) (bool, error) {
			_, err := vms.Get(ctx, vm, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
}

// collect is the garbage collector's delete of an object whose owner is
// gone.
func collect(ctx context.Context, k kube, gvr schema.GroupVersionResource, name string, owner types.UID) error {
	u, err := k.res(gvr).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	owned := false
	for _, ref := range u.GetOwnerReferences() {
		owned = owned || ref.UID == owner
	}
	if !owned || u.GetDeletionTimestamp() != nil {
		return nil
	}
	uid, background := u.GetUID(), metav1.DeletePropagationBackground
	err = k.res(gvr).Delete(ctx, name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &background})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // the collector, or someone, was first
	}
	return err
}
