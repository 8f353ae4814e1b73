package sweeper

import (
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"k8s.io/apimachinery/pkg/labels"
)

// tagNeeds are the tags our objects may still use: a create, a lookup or
// a delete by tag may come for each while they exist.
type tagNeeds struct {
	tags map[string]bool
	// bootLife is how long after its opening a boot bucket may still be
	// handed to a create, and its create land.
	bootLife time.Duration
	inUse    func(string) bool
}

// needs reads them from the caches: every Droplet's tags, multi-create and
// boot bucket (a lookup of a create whose answer was lost, a delete by the
// VM's tag, a list of booting droplets); every VM's tags, since a Droplet
// deleted by hand is made again for a live VM with the same ones; every
// WarmPool's tag. A boot bucket still handed out is needed too.
func (t *tagTidy) needs() tagNeeds {
	n := tagNeeds{tags: map[string]bool{}, bootLife: t.bootBucketLife + t.delay, inUse: t.inUse}
	ns := t.s.opts.Namespace
	if droplets, err := t.s.droplets.List(ns, labels.Everything()); err == nil {
		for _, d := range droplets {
			for _, tag := range d.Spec.Tags {
				n.tags[tag] = true
			}
			n.tags[d.Status.CreateBatch] = true
			n.tags[d.Status.BootTag] = true
		}
	}
	if vms, err := t.s.vms.List(ns, labels.Everything()); err == nil {
		for _, vm := range vms {
			n.tags[digitalocean.VMTag(string(vm.UID))] = true
			n.tags[digitalocean.VMNameTag(vm.Name)] = true
		}
	}
	if pools, err := t.s.pools.List(ns, labels.Everything()); err == nil {
		for _, p := range pools {
			n.tags[digitalocean.PoolTag(string(p.UID))] = true
		}
	}
	return n
}

// has: tag may still be used.
func (n tagNeeds) has(tag string, now time.Time) bool {
	return n.tags[tag] || n.inUse(tag) || now.Before(n.freeFrom(tag))
}

// freeFrom is when a boot bucket can no longer be handed out (zero for
// other tags).
func (n tagNeeds) freeFrom(tag string) time.Time {
	if opened, ok := digitalocean.BootTagOpened(tag); ok {
		return opened.Add(n.bootLife)
	}
	return time.Time{}
}
