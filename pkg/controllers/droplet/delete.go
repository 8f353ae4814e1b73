package droplet

import (
	"context"
	"slices"

	"github.com/digitalocean/godo"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
)

// deleteTargets is what deleting a VM's droplets in DigitalOcean takes: the
// droplet ids on record, and the VM's UID tag when its droplet was created
// on its own (a multi-create's droplets carry their batch's tag instead).
// The tag also catches a create that reached DigitalOcean without its
// answer reaching us, and any second droplet, should one ever exist.
type deleteTargets struct {
	ids []int
	tag string
	// byID are the ids the tag does not cover, deleted one by one.
	byID []int
}

// deleteTargets reads d's targets from what is on record, without asking
// DigitalOcean.
func (h *handler) deleteTargets(d *v1alpha1.Droplet) deleteTargets {
	var t deleteTargets
	uid := vmUID(d)
	if uid != "" && d.Status.CreateBatch == "" {
		t.tag = digitalocean.VMTag(uid)
	}
	// Created here on its own, the status's droplet carries the tag; adopted,
	// it may be an earlier multi-create's.
	taggedStatus := t.tag != "" && v1alpha1.Created.GetReason(d) == "Created"
	t.addCovered(d.Status.DropletID, taggedStatus)
	if id, ok := h.mem.createdID(d); ok {
		// Recorded by markCreated: a single create when the intent named no batch.
		t.addCovered(id, t.tag != "")
	}
	t.add(knownDropletID(h.vmOf(d)))
	return t
}

func (t *deleteTargets) add(id int) { t.addCovered(id, false) }

func (t *deleteTargets) addCovered(id int, byTag bool) {
	if id == 0 || slices.Contains(t.ids, id) {
		return
	}
	t.ids = append(t.ids, id)
	if !byTag {
		t.byID = append(t.byID, id)
	}
}

// alreadyReaped: the reaper deleted exactly these targets of d's VM.
func (h *handler) alreadyReaped(d *v1alpha1.Droplet, t deleteTargets) bool {
	reaped, ok := h.mem.reapedTargets(d)
	return ok && reaped.equal(t)
}

func (t deleteTargets) equal(o deleteTargets) bool {
	a, b := slices.Sorted(slices.Values(t.ids)), slices.Sorted(slices.Values(o.ids))
	return t.tag == o.tag && slices.Equal(a, b)
}

// send deletes every target. DigitalOcean's 204 means the droplet is being
// destroyed (it is gone for GET at once, though lists show it a moment
// longer), and a 404 that it is gone already: neither needs a second look.
func (t deleteTargets) send(ctx context.Context, client *godo.Client) error {
	if t.tag != "" {
		if _, err := client.Droplets.DeleteByTag(ctx, t.tag); err != nil && !digitalocean.IsNotFound(err) {
			return err
		}
	}
	for _, id := range t.byID {
		if _, err := client.Droplets.Delete(ctx, id); err != nil && !digitalocean.IsNotFound(err) {
			return err
		}
	}
	return nil
}
