package droplet

// Finding what a create sent alone made, by the droplet's name. Names are
// unique among a namespace's Droplets but for one case: a VM deleted and
// made again under the same name while the first Droplet still holds its
// droplet. A create sent then carries the VM's tag (status.createTag), and
// only a droplet with that tag is taken for it.

import (
	"context"
	"slices"

	"github.com/digitalocean/godo"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
)

// dropletNameIndex holds the Droplets by namespace and droplet name.
const dropletNameIndex = "droplet.provisioning.hobbyfarm.io/name"

func dropletNameKeys(d *v1alpha1.Droplet) ([]string, error) {
	if d.Spec.Name == "" {
		return nil, nil
	}
	return []string{d.Namespace + "/" + d.Spec.Name}, nil
}

// sameName are the other Droplets of d's namespace with d's droplet name.
func (h *handler) sameName(d *v1alpha1.Droplet) []*v1alpha1.Droplet {
	all, err := h.droplets.Cache().GetByIndex(dropletNameIndex, d.Namespace+"/"+d.Spec.Name)
	if err != nil {
		return nil
	}
	return slices.DeleteFunc(all, func(o *v1alpha1.Droplet) bool { return o.UID == d.UID })
}

// createTag is the tag a create of d sent alone carries beside the shared
// ones: the VM's, while another Droplet has the same name; none otherwise.
func (h *handler) createTag(d *v1alpha1.Droplet) string {
	if d.IsPoolMember() || len(h.sameName(d)) == 0 {
		return ""
	}
	return digitalocean.VMTag(vmUID(d))
}

// sentTags are the tags a create of d sent alone gives the droplet: a pool
// member's identity tags, or a VM's shared ones (and its createTag).
func sentTags(d *v1alpha1.Droplet) []string {
	if d.IsPoolMember() {
		return d.Spec.Tags
	}
	return append(digitalocean.SharedTags(d.Spec.Tags), nonEmpty(d.Status.CreateTag)...)
}

// findByName lists the droplets named like d that can be what d's create
// made, oldest first, at priority p (a create's or a delete's).
func (h *handler) findByName(ctx context.Context, client *godo.Client, d *v1alpha1.Droplet, p digitalocean.Priority) ([]godo.Droplet, error) {
	listed, err := digitalocean.DropletsOf(client).ListByName(ctx, d.Spec.Name, p)
	if err != nil {
		return nil, err
	}
	others := h.sameName(d)
	mine := slices.DeleteFunc(listed, func(c godo.Droplet) bool { return !canBeOf(d, c, others, h.notes.isGone) })
	slices.SortFunc(mine, func(a, b godo.Droplet) int { return a.ID - b.ID })
	return mine, nil
}

// canBeOf: c, listed under d's name, can be what a create of d made. It
// carries d's installation and namespace tags; a pool, VM or batch tag on
// it is d's own; and if it has no VM tag, d's create did not
// need one, DigitalOcean has not confirmed it deleted (a deleted droplet is
// listed a while longer), and no other Droplet of the name holds it.
func canBeOf(d *v1alpha1.Droplet, c godo.Droplet, others []*v1alpha1.Droplet, gone func(int) bool) bool {
	for _, t := range digitalocean.PlaceTags(d.Spec.Tags) {
		if !slices.Contains(c.Tags, t) {
			return false
		}
	}
	if slices.ContainsFunc(c.Tags, func(t string) bool { return digitalocean.IsPoolTag(t) && !slices.Contains(d.Spec.Tags, t) }) {
		return false
	}
	if slices.ContainsFunc(c.Tags, func(t string) bool { return digitalocean.IsBatchTag(t) && t != d.Status.CreateBatch }) {
		return false
	}
	own := digitalocean.VMTag(vmUID(d))
	if slices.ContainsFunc(c.Tags, digitalocean.IsVMTag) {
		return slices.Contains(c.Tags, own)
	}
	if d.Status.CreateTag != "" || gone(c.ID) {
		return false
	}
	return !slices.ContainsFunc(others, func(o *v1alpha1.Droplet) bool { return holds(o, c.ID) })
}

// holds: d has droplet id on record.
func holds(d *v1alpha1.Droplet, id int) bool {
	return d.Status.DropletID == id || d.Spec.ClaimedDropletID == id || d.Spec.AdoptedDropletID == id
}

// first is the oldest of found, or nil.
func first(found []godo.Droplet) *godo.Droplet {
	if len(found) == 0 {
		return nil
	}
	return &found[0]
}
