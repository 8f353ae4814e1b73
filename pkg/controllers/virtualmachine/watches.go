package virtualmachine

import (
	"context"
	"strings"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/related"
	hfcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io/v1"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	corecontrollers "github.com/rancher/wrangler/v3/pkg/generated/controllers/core/v1"
	"github.com/rancher/wrangler/v3/pkg/relatedresource"
	"k8s.io/apimachinery/pkg/runtime"
)

const (
	byEnvironment = "hf-provisioner-digitalocean.byEnvironment"
	byTemplate    = "hf-provisioner-digitalocean.byTemplate"
)

func registerWatches(ctx context.Context,
	vms hfcontrollers.VirtualMachineController,
	envs hfcontrollers.EnvironmentController,
	templates hfcontrollers.VirtualMachineTemplateController,
	secrets corecontrollers.SecretController,
	droplets provcontrollers.DropletController,
	keys provcontrollers.KeyController) {
	vmCache := vms.Cache()
	vmCache.AddIndexer(byEnvironment, func(vm *hfv1.VirtualMachine) ([]string, error) {
		if vm.Labels[ProvisionerLabel] != ProvisionerName {
			return nil, nil
		}
		return []string{vm.Status.EnvironmentId}, nil
	})
	vmCache.AddIndexer(byTemplate, func(vm *hfv1.VirtualMachine) ([]string, error) {
		if vm.Labels[ProvisionerLabel] != ProvisionerName {
			return nil, nil
		}
		return []string{vm.Spec.VirtualMachineTemplateId}, nil
	})

	vmsIndexedBy := func(index string) relatedresource.Resolver {
		return func(namespace, name string, _ runtime.Object) ([]relatedresource.Key, error) {
			matches, err := vmCache.GetByIndex(index, name)
			if err != nil {
				return nil, err
			}
			out := make([]relatedresource.Key, 0, len(matches))
			for _, vm := range matches {
				out = append(out, relatedresource.NewKey(vm.Namespace, vm.Name))
			}
			return out, nil
		}
	}
	relatedresource.Watch(ctx, "vm-from-environment", vmsIndexedBy(byEnvironment), vms, envs)
	relatedresource.Watch(ctx, "vm-from-template", vmsIndexedBy(byTemplate), vms, templates)

	// The Droplet and Key carry their VM's name.
	related.OnChange(droplets.Informer(), viewOfDroplet, vms.Enqueue)
	related.OnWrite(keys.Informer(), vms.Enqueue)

	// The original provisioner's Droplet and Key name their VM in
	// spec.machine (their own names end in -droplet and -droplet-key).
	relatedresource.Watch(ctx, "vm-from-alpha-objects", func(namespace, name string, obj runtime.Object) ([]relatedresource.Key, error) {
		vm := alphaObjectVM(name, obj)
		if vm == "" {
			return nil, nil
		}
		return []relatedresource.Key{relatedresource.NewKey(namespace, vm)}, nil
	}, vms, droplets, keys)

	// The key-pair Secret, also when it is deleted or restored by hand (a
	// restored copy may lack what apply's own watch goes by).
	relatedresource.Watch(ctx, "vm-from-key-secret", func(namespace, name string, _ runtime.Object) ([]relatedresource.Key, error) {
		vmName, ok := strings.CutSuffix(name, sshSecretSuffix)
		if !ok {
			return nil, nil
		}
		if _, err := vmCache.Get(namespace, vmName); err != nil {
			return nil, nil
		}
		return []relatedresource.Key{relatedresource.NewKey(namespace, vmName)}, nil
	}, vms, secrets)

	// A token Secret that appears may fix VMs whose config is waiting for it
	// (Configured=False). Not the Droplets with no verdict yet: those of a
	// flood would all be re-run for each VM's new Secret.
	dropletCache := droplets.Cache()
	relatedresource.Watch(ctx, "vm-from-token-secret", func(namespace, _ string, obj runtime.Object) ([]relatedresource.Key, error) {
		if obj == nil {
			return nil, nil
		}
		waiting, err := dropletCache.List(namespace, everything)
		if err != nil {
			return nil, err
		}
		var out []relatedresource.Key
		for _, d := range waiting {
			if v1alpha1.Configured.IsFalse(d) {
				out = append(out, relatedresource.NewKey(d.Namespace, d.Spec.VirtualMachine))
			}
		}
		return out, nil
	}, vms, secrets)
}
