package warmpool

import (
	"context"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	hfcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io/v1"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/rancher/wrangler/v3/pkg/relatedresource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// registerWatches re-runs a pool when what sizes or fills it changes: a
// scheduled event, a VM of its template, a member (or the Droplet of a VM
// that claimed one), a member's Key; an Environment re-runs its pools.
func registerWatches(ctx context.Context, h *handler,
	events hfcontrollers.ScheduledEventController,
	vms hfcontrollers.VirtualMachineController,
	droplets provcontrollers.DropletController,
	keys provcontrollers.KeyController) {
	poolCache := h.pools.Cache()
	poolsOf := func(namespace string, selector labels.Selector) ([]relatedresource.Key, error) {
		pools, err := poolCache.List(namespace, selector)
		if err != nil {
			return nil, err
		}
		out := make([]relatedresource.Key, 0, len(pools))
		for _, p := range pools {
			out = append(out, relatedresource.NewKey(p.Namespace, p.Name))
		}
		return out, nil
	}
	allPools := func(namespace string) ([]relatedresource.Key, error) { return poolsOf(namespace, labels.Everything()) }
	// An event's required_vms may drop an Environment: every pool looks again.
	relatedresource.Watch(ctx, "warmpool-from-scheduledevent", func(namespace, _ string, _ runtime.Object) ([]relatedresource.Key, error) {
		return allPools(namespace)
	}, h.pools, events)
	relatedresource.Watch(ctx, "warmpool-from-vm", func(namespace, _ string, obj runtime.Object) ([]relatedresource.Key, error) {
		if vm, ok := obj.(*hfv1.VirtualMachine); ok && vm != nil {
			return []relatedresource.Key{relatedresource.NewKey(namespace, PoolName(vm.Status.EnvironmentId, vm.Spec.VirtualMachineTemplateId))}, nil
		}
		return allPools(namespace)
	}, h.pools, vms)
	relatedresource.Watch(ctx, "warmpool-from-droplet", func(namespace, _ string, obj runtime.Object) ([]relatedresource.Key, error) {
		d, ok := obj.(*v1alpha1.Droplet)
		switch {
		case !ok || d == nil:
			return nil, nil
		case d.Labels[v1alpha1.WarmPoolLabel] != "":
			return []relatedresource.Key{relatedresource.NewKey(namespace, d.Labels[v1alpha1.WarmPoolLabel])}, nil
		case d.Spec.Pool != nil:
			// A VM's Droplet that claimed a member: its recorded ID is the handover.
			return []relatedresource.Key{relatedresource.NewKey(namespace, d.Spec.Pool.Name)}, nil
		}
		return nil, nil
	}, h.pools, droplets)
	relatedresource.Watch(ctx, "warmpool-from-key", func(namespace, _ string, obj runtime.Object) ([]relatedresource.Key, error) {
		if k, ok := obj.(*v1alpha1.Key); ok && k != nil && k.Labels[v1alpha1.WarmPoolLabel] != "" {
			return []relatedresource.Key{relatedresource.NewKey(namespace, k.Labels[v1alpha1.WarmPoolLabel])}, nil
		}
		return nil, nil
	}, h.pools, keys)
	// count_capacity and the Environment's existence size its pools.
	relatedresource.Watch(ctx, "warmpool-from-environment", func(namespace, name string, _ runtime.Object) ([]relatedresource.Key, error) {
		return poolsOf(namespace, labels.SelectorFromSet(labels.Set{v1alpha1.EnvironmentLabel: name}))
	}, h.pools, h.envs)
}
