// Package virtualmachine turns a HobbyFarm VirtualMachine into a key-pair
// Secret, a Key and a Droplet, and mirrors the droplet back into the VM.
package virtualmachine

import (
	"context"
	"slices"
	"sync"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/finalizer"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/keyqueue"
	hfcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io/v1"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/rancher/wrangler/v3/pkg/apply"
	corecontrollers "github.com/rancher/wrangler/v3/pkg/generated/controllers/core/v1"
	"github.com/rancher/wrangler/v3/pkg/generic"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

// Options are the installation-wide settings the handler needs.
type Options struct {
	InstallationID string
	// ConfigErrorGrace is how long an invalid config may wait for a fix
	// before the VM is reported failed (DefaultConfigErrorGrace when zero).
	ConfigErrorGrace time.Duration
	// CleanupWorkers run deleting VMs' cleanups (1 when less).
	CleanupWorkers int
	// DeleteTainted deletes a tainted VM, as Gargantua's own provisioner
	// does with its VMs, so its droplet stops billing.
	DeleteTainted bool
}

// ConfigVerdicts is the Environment check's word on configs, which the
// handler reads to fail a VM at once whose config was invalid before it
// was created.
type ConfigVerdicts interface {
	// InvalidSince is since when the check has held the config of template
	// vmt in env invalid, both as they are now; false when it does not.
	InvalidSince(env *hfv1.Environment, vmt *hfv1.VirtualMachineTemplate) (time.Time, bool)
}

type handler struct {
	ctx       context.Context
	opts      Options
	verdicts  ConfigVerdicts
	vms       hfcontrollers.VirtualMachineController
	envs      hfcontrollers.EnvironmentCache
	templates hfcontrollers.VirtualMachineTemplateCache
	secrets   corecontrollers.SecretController
	droplets  provcontrollers.DropletController
	keys      provcontrollers.KeyController
	pools     provcontrollers.WarmPoolCache
	recorder  record.EventRecorder
	// claims holds, by VM UID, the warm pool member this handler claimed
	// for the VM (string), which the cache may not show claimed yet.
	claims sync.Map
	// patchedFrom holds, by VM UID, the resourceVersions of the cached VMs
	// this handler's last patches were sent from ([]string).
	patchedFrom sync.Map
	// applied holds, by VM UID, when objects the cache lacked were last
	// handed to apply (time.Time; see awaitingCache).
	applied sync.Map
	// cleanups runs deleting VMs' cleanups off the VM queue.
	cleanups *keyqueue.Queue
	// deletesSent holds, by VM UID, the UIDs of the deleting VM's Droplet
	// and Key this handler deleted ([]types.UID).
	deletesSent sync.Map
}

// Register wires the VM handlers and the watches that re-run them when a
// VM's Environment, template, token Secret, Key or Droplet changes.
// verdicts is the Environment check's (required).
func Register(ctx context.Context, opts Options, c *controllers.Set, verdicts ConfigVerdicts, apply apply.Apply) {
	vms, envs, templates, secrets, droplets, keys := c.VMs, c.Environments, c.Templates, c.Secrets, c.Droplets, c.Keys
	if opts.ConfigErrorGrace <= 0 {
		opts.ConfigErrorGrace = DefaultConfigErrorGrace
	}
	h := &handler{
		ctx: ctx, opts: opts, verdicts: verdicts, vms: vms, envs: envs.Cache(), templates: templates.Cache(),
		secrets: secrets, droplets: droplets, keys: keys, pools: c.WarmPools.Cache(), recorder: c.Recorder,
	}
	h.cleanups = startCleanupQueue(ctx, h, opts.CleanupWorkers,
		vms.Informer().HasSynced, droplets.Informer().HasSynced, keys.Informer().HasSynced, secrets.Informer().HasSynced)

	// The cleanup handler goes first: handlers run in this order, each on
	// what the one before returned, so the generating handler gets the VM
	// its finalizer write returned. After it, that write would be from a
	// copy the generating handler's own patch made stale, and conflict.
	vms.AddGenericHandler(ctx, finalizer.VMCleanupHandler, h.onlyOurs(
		generic.NewRemoveHandler(finalizer.VMCleanupHandler, h.updateWithOwnSpec, generic.FromObjectHandlerToHandler(h.cleanup))))

	hfcontrollers.RegisterVirtualMachineGeneratingHandler(ctx, vms,
		apply.WithCacheTypes(secrets, droplets, keys).WithStrictCaching(),
		"", HandlerName, h.generate,
		// Despite its name this makes apply set controller owner references to the VM.
		&generic.GeneratingHandlerOptions{NoOwnerReference: true})

	if opts.DeleteTainted {
		vms.OnChange(ctx, TaintedHandlerName, h.deleteTainted)
	}

	registerWatches(ctx, vms, envs, templates, secrets, droplets, keys)
}

// onlyOurs keeps wrangler's remove handler, which adds its finalizer on first
// sight, away from VMs we may not touch yet and from other provisioners' VMs,
// and from a cached copy older than the write that added it (that copy's
// write would only conflict).
func (h *handler) onlyOurs(next generic.Handler) generic.Handler {
	return func(key string, obj runtime.Object) (runtime.Object, error) {
		vm, ok := obj.(*hfv1.VirtualMachine)
		if !ok || vm == nil {
			return obj, nil
		}
		if vm.DeletionTimestamp != nil && !hasCleanupFinalizer(vm) && hasAlphaFinalizer(vm) {
			// Deleted before this controller ever saw it, with the original
			// provisioner's finalizer on: the cleanup covers what it made.
			h.cleanups.Add(key)
			return obj, nil
		}
		if !Eligible(vm) && !hasCleanupFinalizer(vm) {
			return obj, nil
		}
		if vm.DeletionTimestamp == nil && h.writtenPast(vm) {
			return obj, nil
		}
		return next(key, obj)
	}
}

func hasCleanupFinalizer(vm *hfv1.VirtualMachine) bool {
	return finalizer.Has(vm, finalizer.VMCleanupHandler)
}

func hasAlphaFinalizer(vm *hfv1.VirtualMachine) bool {
	return slices.Contains(vm.Finalizers, alpha.VMFinalizer)
}

// retrySoon is how long to wait for a just-applied object to reach the cache.
const retrySoon = time.Second
