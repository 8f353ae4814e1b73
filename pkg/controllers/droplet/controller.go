package droplet

import (
	"context"
	"slices"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/finalizer"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/owner"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/pass"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/related"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	hfcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io/v1"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	corecontrollers "github.com/rancher/wrangler/v3/pkg/generated/controllers/core/v1"
	"github.com/rancher/wrangler/v3/pkg/relatedresource"
	"github.com/sirupsen/logrus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

// HandlerName is part of the API, as its cleanup handler's name
// (finalizer.DropletCleanupHandler) is. Never rename it.
const HandlerName = "hf-provisioner-digitalocean-droplet"

// Options tune how often droplets are re-read from DigitalOcean.
type Options struct {
	// BootResync is the re-read period while a droplet is booting.
	BootResync time.Duration
	// ActiveResync is the re-read period once a droplet is active.
	ActiveResync time.Duration
	// Resync is how droplets are re-read; ResyncBatched when empty.
	Resync ResyncMode
	// InstallationTag is on every droplet of this installation; the batched
	// resync lists by it.
	InstallationTag string
	// SSHPort is where the reachability check logs in (22 when zero).
	SSHPort int
	// ProbeWorkers bounds the reachability check's logins in flight.
	ProbeWorkers int
	// BootWindow is how long a boot seen counts toward the token's
	// shortest boot, which booting droplets wait most of before they are
	// listed (see bootTimes); DefaultBootWindow when zero.
	BootWindow time.Duration
	// DeleteTagReuse is how long a token's delete tag is kept after its
	// last batch for the next one (see deleteQueue); DefaultDeleteTagReuse
	// when zero. The tag tidy deletes it once released.
	DeleteTagReuse time.Duration
	// RefusedCreatePause is how long a create DigitalOcean refused waits
	// before it is sent again unchanged; DefaultRefusedCreatePause when
	// zero.
	RefusedCreatePause time.Duration
	// SoldOutPause is how long a region DigitalOcean refused a size in as
	// sold out is passed over for it; DefaultSoldOutPause when zero.
	SoldOutPause time.Duration
	// Catalogs reads a token's account: a create refused for the droplet
	// limit says the limit and the droplets held, and a create with several
	// regions skips those the token's catalog does not offer its size and
	// image in. Nil: DigitalOcean's message alone, every listed region.
	Catalogs *digitalocean.Catalogs
}

type handler struct {
	ctx      context.Context
	opts     Options
	clients  *digitalocean.Clients
	droplets provcontrollers.DropletController
	keys     provcontrollers.KeyCache
	secrets  corecontrollers.SecretCache
	vms      hfcontrollers.VirtualMachineCache
	vmClient hfcontrollers.VirtualMachineClient
	recorder record.EventRecorder
	// pass holds each pass's Events until its status write, and spaces
	// out each Droplet's retries after transient failures.
	pass *pass.Kit[*v1alpha1.Droplet]
	// notes is what this process remembers of the Droplets between passes.
	notes processNotes
	// buckets hands out the boot tags droplets are created with.
	buckets *bootBuckets
	// boots learns how long droplets take to boot.
	boots *bootTimes
	// lists serves the batched resync; nil when each droplet is read alone.
	lists *listCache
	// prober runs the reachability check's logins.
	prober *prober
	// deletes sends the reaper's deletes by ID in batches; nil: one by one.
	deletes *deleteBatcher
	// limits lines up the creates refused for the droplet limit.
	limits *limitWaits
	// soldOut passes over, for a while, regions DigitalOcean refused a
	// size in as sold out.
	soldOut *soldOutRegions
}

// Register wires the Droplet handlers.
func Register(ctx context.Context, opts Options, c *controllers.Set) {
	clients, droplets, keys, secrets, vms := c.DigitalOcean, c.Droplets, c.Keys, c.Secrets, c.VMs
	h := &handler{ctx: ctx, opts: opts, clients: clients, droplets: droplets,
		keys: keys.Cache(), secrets: secrets.Cache(), vms: vms.Cache(), vmClient: vms, recorder: c.Recorder,
		buckets: newBootBuckets(opts.InstallationTag, opts.BootResync), boots: newBootTimes(opts.BootWindow)}
	h.withPass(c.Recorder)
	enqueueKey := func(key string) {
		if namespace, name, err := cache.SplitMetaNamespaceKey(key); err == nil {
			droplets.Enqueue(namespace, name)
		}
	}
	h.prober = newProber(ctx, opts.ProbeWorkers, enqueueKey)
	h.limits = newLimitWaits(enqueueKey)
	h.soldOut = newSoldOutRegions(opts.SoldOutPause)
	h.deletes = newDeleteBatcher(h)
	if opts.Resync != ResyncPerDroplet {
		h.lists = newListCache(ctx, opts.InstallationTag, h.enqueueByDropletID, h.boots, clients.Room)
	}
	// The remove handler first, so that sync gets the Droplet its finalizer
	// write returned and can create the droplet in the same pass.
	// The original alpha provisioner's Droplets are the takeover's to
	// clean up (see package takeover).
	droplets.Cache().AddIndexer(awaitingCreateIndex, awaitingCreate)
	droplets.Cache().AddIndexer(dropletNameIndex, dropletNameKeys)
	finalizer.RegisterCleanup(ctx, droplets, finalizer.DropletCleanupHandler, h.cleanup, alpha.IsDroplet)
	droplets.OnChange(ctx, HandlerName, h.sync)
	startReaper(ctx, h, vms.Informer(), droplets.Informer(), secrets.Informer())

	// A Key that becomes ready unblocks the droplets made with it.
	users := keyUsers(droplets.Cache())
	related.OnWrite(keys.Informer(), func(namespace, name string) {
		dependents, _ := users(namespace, name, nil)
		for _, k := range dependents {
			droplets.Enqueue(k.Namespace, k.Name)
		}
	})
	relatedresource.Watch(ctx, "droplet-from-token-secret", tokenUsers(droplets.Cache()), droplets, secrets)
}

// keyUsers finds the droplets made with a Key: its VM's, or all of an
// Environment's for a shared one.
func keyUsers(cache provcontrollers.DropletCache) relatedresource.Resolver {
	return func(namespace, name string, _ runtime.Object) ([]relatedresource.Key, error) {
		out := []relatedresource.Key{relatedresource.NewKey(namespace, name)}
		all, err := cache.List(namespace, everything)
		if err != nil {
			return nil, err
		}
		for _, d := range all {
			if d.Name != name && slices.Contains(d.Spec.KeyRefs, name) {
				out = append(out, relatedresource.NewKey(d.Namespace, d.Name))
			}
		}
		return out, nil
	}
}

// tokenUsers finds the droplets whose token lives in a Secret.
func tokenUsers(cache provcontrollers.DropletCache) relatedresource.Resolver {
	return func(namespace, name string, _ runtime.Object) ([]relatedresource.Key, error) {
		all, err := cache.List(namespace, everything)
		if err != nil {
			return nil, err
		}
		var out []relatedresource.Key
		for _, d := range all {
			if d.Spec.TokenSecretRef.Name == name {
				out = append(out, relatedresource.NewKey(d.Namespace, d.Name))
			}
		}
		return out, nil
	}
}

// vmOf returns the droplet's VM, if it still exists.
func (h *handler) vmOf(d *v1alpha1.Droplet) *hfv1.VirtualMachine {
	return owner.VM(h.vms, d, d.Spec.VirtualMachine)
}

// enqueueByDropletID re-queues the Droplets of the given droplet ids, so a
// change seen in a list reaches them now rather than at their next period.
func (h *handler) enqueueByDropletID(ids []int) {
	if len(ids) == 0 {
		return
	}
	wanted := make(map[int]bool, len(ids))
	for _, id := range ids {
		wanted[id] = true
	}
	all, err := h.droplets.Cache().List(metav1.NamespaceAll, everything)
	if err != nil {
		return
	}
	for _, d := range all {
		if wanted[d.Status.DropletID] {
			h.droplets.Enqueue(d.Namespace, d.Name)
		}
	}
}

// logFor names what d serves in every line: its VM, or its warm pool.
func logFor(d *v1alpha1.Droplet) *logrus.Entry {
	if d.IsPoolMember() {
		return logrus.WithField("pool", d.Spec.Pool.Name).WithField("member", d.Name)
	}
	return logrus.WithField("vm", d.Spec.VirtualMachine)
}
