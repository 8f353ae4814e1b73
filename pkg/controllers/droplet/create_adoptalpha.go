package droplet

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/digitalocean/godo"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
)

// ReasonTakenOver is the Created reason of a Droplet whose droplet the
// original alpha provisioner made (spec.adoptedDropletID).
const ReasonTakenOver = "TakenOver"

// ReasonAdoptedDropletGone: the alpha's droplet no longer exists at the
// takeover. It is not replaced: its user's session would move to a new
// droplet with a new address mid-way.
const ReasonAdoptedDropletGone = "AdoptedDropletGone"

// adoptAlpha records the alpha's droplet as d's: one read by its ID, never
// a create. Its user is on it already: its login check follows at once.
func (h *handler) adoptAlpha(ctx context.Context, client *godo.Client, d *v1alpha1.Droplet) (time.Duration, error) {
	id := d.Spec.AdoptedDropletID
	found, err := digitalocean.DropletsOf(client).Get(ctx, id, digitalocean.PriorityCreate)
	if err == nil && found == nil {
		h.pass.Fail(d, v1alpha1.Created, ReasonAdoptedDropletGone, fmt.Sprintf(
			"droplet %d, made by the original provisioner, no longer exists in DigitalOcean and is not replaced: delete the VM to get a new one", id))
		return 0, nil
	}
	if err == nil && !slices.Contains(found.Tags, h.opts.InstallationTag) {
		// With this installation's tag it is in the lists every droplet of
		// ours is read from, and the uninstall's drain deletes it.
		err = digitalocean.DropletsOf(client).Tag(ctx, h.opts.InstallationTag, []int{id}, digitalocean.PriorityCreate)
	}
	if err != nil {
		return h.pass.FailDO(d, v1alpha1.Created, err), nil
	}
	h.pass.Succeeded(d)
	h.observe(d, found)
	logFor(d).WithField("droplet", id).Info("took over the original provisioner's droplet")
	h.progress(d, v1alpha1.Created, ReasonTakenOver, fmt.Sprintf("droplet %d, made by the original provisioner, taken over", id))
	if v1alpha1.Ready.IsTrue(d) {
		if wait := h.checkReachable(d); wait > 0 {
			return wait, nil
		}
		return h.opts.ActiveResync, nil
	}
	return h.opts.BootResync, nil
}

// takenOver: d's droplet was made elsewhere (a warm pool, the alpha) and is
// known by its ID alone: no tag names its VM.
func takenOver(d *v1alpha1.Droplet) bool {
	return isClaimed(d) || d.Spec.AdoptedDropletID != 0
}
