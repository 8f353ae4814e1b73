package warmpool

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/virtualmachine"
	hfcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io/v1"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	corecontrollers "github.com/rancher/wrangler/v3/pkg/generated/controllers/core/v1"
	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
)

// Options are the installation-wide settings the pool controller needs.
type Options struct {
	InstallationID string
	// Resync is how often each pool is re-evaluated without a change
	// (DefaultResync when zero).
	Resync time.Duration
	// SurplusIdle is how long a ready member beyond an auto-sized pool's
	// size waits unclaimed before it is deleted (DefaultSurplusIdle when zero).
	SurplusIdle time.Duration
}

// DefaultResync re-evaluates each pool every minute.
const DefaultResync = time.Minute

// retryAfter is how long to wait for something another pass must see.
const retryAfter = 5 * time.Second

type handler struct {
	opts      Options
	envs      hfcontrollers.EnvironmentController
	templates hfcontrollers.VirtualMachineTemplateCache
	events    hfcontrollers.ScheduledEventCache
	vms       hfcontrollers.VirtualMachineController
	pools     provcontrollers.WarmPoolController
	droplets  provcontrollers.DropletController
	keys      provcontrollers.KeyController
	secrets   corecontrollers.SecretController
	recorder  record.EventRecorder
	// lastPass holds, by pool UID, when droplet time was last accounted (time.Time).
	lastPass sync.Map
	expected expectations
	refills  refills
	// eventState remembers each pool's open event windows.
	eventState eventState
	// handedOver holds the UIDs of the members handed over (bool).
	handedOver sync.Map
	// unrecorded holds, by pool UID, the claims handed over that no status
	// write has recorded yet: a write that conflicts keeps them.
	unrecorded   map[types.UID]int
	unrecordedMu sync.Mutex
}

// Register wires the pool handlers: one makes the WarmPools from the
// Environments, the other keeps each pool at its size.
func Register(ctx context.Context, opts Options, c *controllers.Set) {
	envs, events, vms, pools, droplets, keys := c.Environments, c.ScheduledEvents, c.VMs, c.WarmPools, c.Droplets, c.Keys
	if opts.Resync <= 0 {
		opts.Resync = DefaultResync
	}
	if opts.SurplusIdle <= 0 {
		opts.SurplusIdle = DefaultSurplusIdle
	}
	h := &handler{opts: opts, envs: envs, templates: c.Templates.Cache(), events: events.Cache(), vms: vms,
		pools: pools, droplets: droplets, keys: keys, secrets: c.Secrets, recorder: c.Recorder}
	envs.OnChange(ctx, EnvironmentHandlerName, h.onEnvironment)
	pools.OnChange(ctx, HandlerName, h.onPool)
	registerWatches(ctx, h, events, vms, droplets, keys)
}

// onPool sizes the pool, hands claimed members over, drains and replaces
// members, fills it up, and records its status.
func (h *handler) onPool(_ string, pool *v1alpha1.WarmPool) (*v1alpha1.WarmPool, error) {
	if pool == nil || pool.DeletionTimestamp != nil {
		if pool != nil {
			metrics.ForgetWarmPool(pool.Spec.Environment, pool.Spec.Template)
			h.lastPass.Delete(pool.UID)
			h.expected.forget(pool.UID)
			h.refills.forget(pool.UID)
			h.eventState.forget(pool)
			h.addUnrecorded(pool, 0)
		}
		return pool, nil
	}
	log := logrus.WithField("pool", pool.Name).WithField("environment", pool.Spec.Environment)
	env, err := h.envs.Cache().Get(pool.Namespace, pool.Spec.Environment)
	if err != nil {
		// Gone: the garbage collector deletes the pool with it.
		return pool, nil
	}
	members, err := h.members(pool)
	if err != nil {
		return pool, err
	}
	now := time.Now()
	h.accountDropletTime(pool, members, now)

	handedOver, pending, err := h.handOver(pool, members)
	unrecorded := h.addUnrecorded(pool, handedOver)
	if err != nil {
		return pool, err
	}
	status := *pool.Status.DeepCopy()
	status.Claims += unrecorded
	w, err := h.poolWindow(pool, env, members, now)
	if err != nil {
		return pool, err
	}
	vms, err := h.vmsOfTemplate(pool)
	if err != nil {
		return pool, err
	}
	status.ActiveEvents = eventNames(w.Serving)
	size, auto := h.size(pool, members, vms, now)
	status.Auto = auto
	status.Wanted, status.Message = wantedSize(pool, env, w, len(liveVMs(vms)), pending, size)

	var errs []error
	drain, surplusDue := toDrainAt(pool, members, status.Wanted, size, now, h.opts.SurplusIdle)
	for _, d := range drain {
		log.WithField("member", d.Name).WithField("droplet", d.Status.DropletID).Info("draining a warm pool member")
		errs = append(errs, h.deleteMember(pool, d))
	}
	errs = append(errs, h.cleanupPartial(pool, members, now))
	if missing := status.Wanted - countCurrent(pool, members) - h.expected.unseen(pool.UID, members, now); missing > 0 {
		log.WithField("wanted", status.Wanted).WithField("creating", missing).Info("filling the warm pool")
		errs = append(errs, h.fill(pool, missing))
	}
	countMembers(pool, members, &status)
	pool, err = h.writeStatus(pool, status)
	if err == nil {
		h.addUnrecorded(pool, -unrecorded)
	}
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return pool, err
	}
	h.pools.EnqueueAfter(pool.Namespace, pool.Name, soonest(h.requeueAfter(w, time.Now()), surplusDue))
	return pool, nil
}

// members are the pool's member Droplets: labelled with it and owned by it.
func (h *handler) members(pool *v1alpha1.WarmPool) ([]*v1alpha1.Droplet, error) {
	all, err := h.droplets.Cache().List(pool.Namespace, labels.SelectorFromSet(labels.Set{v1alpha1.WarmPoolLabel: pool.Name}))
	if err != nil {
		return nil, err
	}
	var out []*v1alpha1.Droplet
	for _, d := range all {
		if isControlledBy(d, string(pool.UID)) {
			out = append(out, d)
		}
	}
	return out, nil
}

func countCurrent(pool *v1alpha1.WarmPool, members []*v1alpha1.Droplet) int {
	n := 0
	for _, d := range members {
		if current(pool, d) {
			n++
		}
	}
	return n
}

// vmsOfTemplate lists this provisioner's VMs of the pool's Environment
// and template, those going away too.
func (h *handler) vmsOfTemplate(pool *v1alpha1.WarmPool) ([]*hfv1.VirtualMachine, error) {
	vms, err := h.vms.Cache().List(pool.Namespace, labels.SelectorFromSet(labels.Set{virtualmachine.ProvisionerLabel: virtualmachine.ProvisionerName}))
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(vms, func(vm *hfv1.VirtualMachine) bool {
		return vm.Status.EnvironmentId != pool.Spec.Environment || vm.Spec.VirtualMachineTemplateId != pool.Spec.Template
	}), nil
}

// liveVMs are the VMs not going away.
func liveVMs(vms []*hfv1.VirtualMachine) []*hfv1.VirtualMachine {
	return slices.DeleteFunc(slices.Clone(vms), func(vm *hfv1.VirtualMachine) bool { return vm.DeletionTimestamp != nil })
}

// soonest is the shorter of two waits, a zero one not counting.
func soonest(a, b time.Duration) time.Duration {
	if b > 0 && b < a {
		return b
	}
	return a
}

// addUnrecorded adds n to the pool's claims not yet in its status and
// returns the new total; a deleted pool's are dropped.
func (h *handler) addUnrecorded(pool *v1alpha1.WarmPool, n int) int {
	h.unrecordedMu.Lock()
	defer h.unrecordedMu.Unlock()
	if pool.DeletionTimestamp != nil {
		delete(h.unrecorded, pool.UID)
		return 0
	}
	if h.unrecorded == nil {
		h.unrecorded = map[types.UID]int{}
	}
	h.unrecorded[pool.UID] += n
	return h.unrecorded[pool.UID]
}
