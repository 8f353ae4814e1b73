package droplet

import (
	"context"
	"fmt"
	"time"

	"github.com/digitalocean/godo"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
	"k8s.io/apimachinery/pkg/labels"
)

// adoptClaimed takes over the pool droplet d's VM claimed: it never creates
// one, and asks DigitalOcean nothing when the member's last observation is
// in the cache. A claim then costs no request: the member's own resync kept
// that observation (a member is claimable only Ready and Reachable), and
// the VM's login check with its own Secret follows at once. The droplet is
// not tagged for the VM in DigitalOcean: every delete of a claimed droplet
// goes by its ID, which is on record (spec.claimedDropletID), and the orphan
// sweep spares a droplet whose ID a live VM's Droplet holds. The normal
// resync re-reads it as any droplet; a droplet gone by then gives
// ClaimedDropletGone (claimedGone).
func (h *handler) adoptClaimed(ctx context.Context, client *godo.Client, d *v1alpha1.Droplet) (time.Duration, error) {
	id := d.Spec.ClaimedDropletID
	if member := h.claimedMemberOf(d); member != nil {
		takeObservation(d, member)
	} else {
		// The member is not in the cache (a restart while its cache fills):
		// one read instead.
		found, err := digitalocean.DropletsOf(client).Get(ctx, id, digitalocean.PriorityCreate)
		if err != nil {
			return h.pass.FailDO(d, v1alpha1.Created, err), nil
		}
		if found == nil {
			h.claimedGone(d)
			return 0, nil
		}
		h.pass.Succeeded(d)
		d.Status.DropletID = found.ID
		h.observeFields(d, found)
	}
	logFor(d).WithField("droplet", id).WithField("pool", poolName(d)).Info("took droplet from warm pool")
	h.observeActivity(d)
	h.progress(d, v1alpha1.Created, v1alpha1.ReasonClaimedFromPool, fmt.Sprintf("droplet %d taken from warm pool %q", id, poolName(d)))
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

// claimedMemberOf is the cached pool member whose droplet d claimed, with
// an observation to take over, or nil.
func (h *handler) claimedMemberOf(d *v1alpha1.Droplet) *v1alpha1.Droplet {
	members, err := h.droplets.Cache().List(d.Namespace, labels.SelectorFromSet(labels.Set{v1alpha1.WarmPoolLabel: poolName(d)}))
	if err != nil {
		return nil
	}
	for _, m := range members {
		if m.IsPoolMember() && m.Status.DropletID == d.Spec.ClaimedDropletID && m.Status.Status != "" {
			return m
		}
	}
	return nil
}

// takeObservation copies what the member last read of its droplet.
func takeObservation(d, member *v1alpha1.Droplet) {
	s := &member.Status
	d.Status.DropletID = s.DropletID
	d.Status.Status = s.Status
	d.Status.PublicIPv4, d.Status.PrivateIPv4, d.Status.PublicIPv6 = s.PublicIPv4, s.PrivateIPv4, s.PublicIPv6
	d.Status.Region = s.Region
	d.Status.CreatedAt = s.CreatedAt
	d.Status.PriceHourly, d.Status.PriceMonthly = s.PriceHourly, s.PriceMonthly
}

// claimedGone records that the claimed droplet no longer exists: it is not
// replaced, and the VM is reported failed (see virtualmachine's failure).
func (h *handler) claimedGone(d *v1alpha1.Droplet) {
	if v1alpha1.Ready.IsTrue(d) {
		events.SetCondition(d, v1alpha1.Ready, false, "NotFound", fmt.Sprintf("DigitalOcean does not know droplet %d", d.Spec.ClaimedDropletID))
	}
	h.pass.Fail(d, v1alpha1.Created, v1alpha1.ReasonClaimedDropletGone, fmt.Sprintf(
		"droplet %d, taken from warm pool %q, no longer exists in DigitalOcean and is not replaced: delete the VM to get a new one", d.Spec.ClaimedDropletID, poolName(d)))
}

// isClaimed: d's droplet is the one its VM took from a pool.
func isClaimed(d *v1alpha1.Droplet) bool {
	return d.Spec.ClaimedDropletID != 0 && !d.IsPoolMember()
}

// poolName is the WarmPool d belongs to or was taken from.
func poolName(d *v1alpha1.Droplet) string {
	if d.Spec.Pool == nil {
		return ""
	}
	return d.Spec.Pool.Name
}
