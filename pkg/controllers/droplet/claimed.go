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

// adoptClaimed takes over the pool droplet d's VM claimed: it never creates
// one. The droplet gets the VM's tags in DigitalOcean first, so that from
// the moment its ID is on record every lookup and delete by the VM's tag
// finds it; until then the pool member owns it (see handover).
func (h *handler) adoptClaimed(ctx context.Context, client *godo.Client, d *v1alpha1.Droplet) (time.Duration, error) {
	id := d.Spec.ClaimedDropletID
	found, _, err := client.Droplets.Get(ctx, id)
	if digitalocean.IsNotFound(err) {
		return 0, h.fail(d, v1alpha1.Created, ReasonClaimedDropletGone, fmt.Sprintf(
			"droplet %d, taken from warm pool %q, no longer exists in DigitalOcean and is not replaced: delete the VM to get a new one", id, poolName(d)))
	}
	if err != nil {
		return h.failDO(d, v1alpha1.Created, err), nil
	}
	// The backoff counts failed calls in a row, not failed passes: a pass
	// makes up to five calls and keeps what the earlier ones tagged, and
	// under a steady error rate counting passes stretched the delay to a
	// minute while DigitalOcean answered most calls.
	h.backoff.Reset(objectKey(d))
	for _, tag := range vmTags(d) {
		if slices.Contains(found.Tags, tag) {
			continue // tagged by an earlier pass whose status write was lost
		}
		if err := digitalocean.TagDroplets(ctx, client, tag, []int{id}); err != nil {
			return h.failDO(d, v1alpha1.Created, err), nil
		}
	}
	h.backoff.Reset(objectKey(d))
	logFor(d).WithField("droplet", id).WithField("pool", poolName(d)).Info("took droplet from warm pool")
	h.observe(d, found)
	h.progress(d, v1alpha1.Created, ReasonClaimedFromPool, fmt.Sprintf("droplet %d taken from warm pool %q", id, poolName(d)))
	if v1alpha1.Ready.IsTrue(d) {
		// Checked with the VM's own Secret, which holds the member's key:
		// one login, and the VM is running.
		if wait := h.checkReachable(d); wait > 0 {
			return wait, nil
		}
		return h.opts.ActiveResync, nil
	}
	return h.opts.BootResync, nil
}
