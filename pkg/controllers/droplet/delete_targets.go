package droplet

import (
	"context"
	"slices"

	"github.com/digitalocean/godo"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
)

// deleteTargets is what deleting a VM's droplets in DigitalOcean takes: the
// droplet ids on record, and the Droplet itself while the outcome of a
// single create is unknown (sent, its answer not in): what that create made
// is then found by its name (create_find.go). A droplet whose ID is known
// goes by ID, alone or in a batch (delete_batch.go); the orphan sweep is the last
// line of defence for anything else of ours. A droplet a VM took from a
// warm pool has the pool member's name, and its ID is always known
// (spec.claimedDropletID): it goes by that ID alone.
type deleteTargets struct {
	ids        []int
	unanswered *v1alpha1.Droplet
}

// targetsOf reads d's targets from what is on record, without asking
// DigitalOcean.
func (h *handler) targetsOf(d *v1alpha1.Droplet) deleteTargets {
	var t deleteTargets
	uid := vmUID(d)
	createdID, createdHere := h.notes.createdID(d)
	answered := createdHere || (v1alpha1.Created.IsTrue(d) && d.Status.DropletID != 0)
	if uid != "" && d.Status.CreateBatch == "" && !answered && !takenOver(d) {
		t.unanswered = d
	}
	t.add(d.Status.DropletID)
	if isClaimed(d) {
		t.add(d.Spec.ClaimedDropletID)
	}
	t.add(d.Spec.AdoptedDropletID)
	t.add(createdID)
	t.add(knownDropletID(h.vmOf(d)))
	return t
}

func (t *deleteTargets) add(id int) {
	if id == 0 || slices.Contains(t.ids, id) {
		return
	}
	t.ids = append(t.ids, id)
}

// settled: DigitalOcean confirmed every target deleted already (the reaper,
// a batch or another cleanup sent it), so nothing is left to send.
func (t deleteTargets) settled(m *processNotes) bool {
	return t.unanswered == nil && len(t.ids) > 0 && !slices.ContainsFunc(t.ids, func(id int) bool { return !m.isGone(id) })
}

// deleteEach deletes every target DigitalOcean has not confirmed deleted yet, and
// remembers what it confirms. DigitalOcean's 204 means the droplet is being
// destroyed (it is gone for GET at once, though lists show it a moment
// longer), and a 404 that it is gone already: neither needs a second look.
func (h *handler) deleteEach(ctx context.Context, client *godo.Client, t deleteTargets) error {
	if t.unanswered != nil {
		found, err := h.findByName(ctx, client, t.unanswered, digitalocean.PriorityDelete)
		if err != nil {
			return err
		}
		for _, f := range found {
			t.add(f.ID)
		}
	}
	for _, id := range t.ids {
		if h.notes.isGone(id) {
			continue
		}
		if err := digitalocean.DropletsOf(client).Delete(ctx, id); err != nil {
			return err
		}
		h.notes.noteGone(id)
		h.limits.freed(client, 1)
	}
	return nil
}
