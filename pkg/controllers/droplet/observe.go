package droplet

// The observe path: a Droplet with a droplet ID has it re-read, from the
// token's shared list or by its own GET, and its status follows.

import (
	"context"
	"fmt"
	"time"

	"github.com/digitalocean/godo"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// lastSyncedRefresh bounds how stale status.lastSynced may get while nothing changes,
// without writing the status on every poll.
const lastSyncedRefresh = 10 * time.Minute

// refresh re-reads the droplet and schedules the next read.
func (h *handler) refresh(ctx context.Context, client *godo.Client, d *v1alpha1.Droplet) (time.Duration, error) {
	// A list is shared, and may be up to one period old: each costs a
	// request per 200 droplets of the token, and every Droplet whose droplet
	// a new list shows changed is enqueued at once, so a change still
	// reaches its Droplet within about one period.
	maxAge := h.opts.BootResync
	if v1alpha1.Ready.IsTrue(d) {
		maxAge = h.opts.ActiveResync
	}
	if wait := untilListable(d); wait > 0 {
		// Created moments ago, so still new, and no list shows it yet: the
		// pass that the create's own status write causes would spend a GET
		// to learn that.
		return wait, nil
	}
	if wait := h.beforeBootable(client, d); wait > 0 {
		return min(wait, maxAge*bootBucketPeriods), nil
	}
	current, err := h.read(ctx, client, d, maxAge)
	if digitalocean.IsHeldBack(err) {
		// Not a problem of the droplet's: this controller chose to wait for
		// room in the token's budget. Nothing to record.
		if h.lists != nil {
			// The Droplets waiting for a list share it: spreading them out
			// (as the backoff's jitter does for GETs) only delays it.
			return max(digitalocean.Classify(err).RetryAfter, maxAge), nil
		}
		return h.pass.Retry(d, digitalocean.Classify(err)), nil
	}
	gone := err == nil && current == nil
	if gone && isClaimed(d) {
		// Taken over on the member's last observation: the first read that
		// finds it gone says so, and the VM fails (it is never replaced).
		h.claimedGone(d)
		return 0, nil
	}
	if gone {
		// Never recreate here: right after a create DigitalOcean may not know the
		// droplet yet, and a second droplet is worse than a late one.
		h.pass.Transition(d, v1alpha1.Ready, false, "NotFound", fmt.Sprintf("DigitalOcean does not know droplet %d", d.Status.DropletID))
		return h.opts.BootResync, nil
	}
	if err != nil {
		return h.pass.FailDO(d, v1alpha1.Ready, err), nil
	}
	h.pass.Succeeded(d)
	h.observe(d, current)
	if d.Status.LastSynced != nil && time.Since(d.Status.LastSynced.Time) > lastSyncedRefresh {
		now := metav1.Now()
		d.Status.LastSynced = &now
	}
	if v1alpha1.Ready.IsTrue(d) {
		if wait := h.checkReachable(d); wait > 0 {
			return min(wait, h.opts.ActiveResync), nil
		}
		return h.opts.ActiveResync, nil
	}
	return h.opts.BootResync, nil
}

// read returns DigitalOcean's view of d's droplet, at most maxAge old: from
// the token's shared list when batched, else by its own GET. A droplet the
// list lacks is asked for by id, which tells gone (nil) from not listed yet.
func (h *handler) read(ctx context.Context, client *godo.Client, d *v1alpha1.Droplet, maxAge time.Duration) (*godo.Droplet, error) {
	id := d.Status.DropletID
	if h.lists != nil {
		listed, err := h.lists.get(client, id, maxAge, listableFrom(d), listTag(d), d.Status.BootTag)
		if err != nil || listed != nil {
			return listed, err
		}
	}
	return digitalocean.DropletsOf(client).Get(ctx, id, digitalocean.PriorityResync)
}

// listTag is the tag of the list d's droplet is read from: while it boots,
// its boot bucket's, which holds only droplets created around the same
// time; else the installation's ("").
func listTag(d *v1alpha1.Droplet) string {
	if v1alpha1.Ready.IsTrue(d) {
		return ""
	}
	return d.Status.BootTag
}

// beforeBootable is how long d's droplet, booting since its create, has
// before any list could show it active (see bootTimes).
func (h *handler) beforeBootable(client *godo.Client, d *v1alpha1.Droplet) time.Duration {
	if h.lists == nil || d.Status.BootTag == "" || v1alpha1.Ready.IsTrue(d) {
		return 0
	}
	created, ok := createdAt(d)
	if !ok {
		return 0
	}
	return h.boots.until(client, created)
}

// createdAt is DigitalOcean's created_at of d's droplet.
func createdAt(d *v1alpha1.Droplet) (time.Time, bool) {
	created, err := time.Parse(time.RFC3339, d.Status.CreatedAt)
	return created, err == nil
}

// listableAt is when a list can first show d's droplet: a second after
// DigitalOcean's created_at, which it gives to the second.
func listableAt(d *v1alpha1.Droplet) (time.Time, bool) {
	created, ok := createdAt(d)
	return created.Add(time.Second), ok
}

// listableFrom is listableAt for a list to be taken after. Right after a
// create, one new list for all the new droplets is cheaper than a GET each.
func listableFrom(d *v1alpha1.Droplet) time.Time {
	from, ok := listableAt(d)
	if !ok || from.After(time.Now()) {
		// DigitalOcean's clock ahead of ours would make every list too old.
		return time.Time{}
	}
	return from
}

// untilListable is how long until a list can show a droplet created in the
// last second, and 0 otherwise (also when DigitalOcean's clock is ahead of
// ours by more than that, which must not hold off reads).
func untilListable(d *v1alpha1.Droplet) time.Duration {
	from, ok := listableAt(d)
	if wait := time.Until(from); ok && wait <= time.Second {
		return max(wait, 0)
	}
	return 0
}

// observe copies DigitalOcean's view of the droplet into the status.
func (h *handler) observe(d *v1alpha1.Droplet, do *godo.Droplet) {
	d.Status.DropletID = do.ID
	h.observeFields(d, do)
	h.observeActivity(d)
}

// observeFields copies DigitalOcean's view of the droplet's status,
// addresses, region and price.
func (h *handler) observeFields(d *v1alpha1.Droplet, do *godo.Droplet) {
	d.Status.Status = do.Status
	d.Status.PublicIPv4, _ = do.PublicIPv4()
	d.Status.PrivateIPv4, _ = do.PrivateIPv4()
	d.Status.PublicIPv6, _ = do.PublicIPv6()
	d.Status.CreatedAt = do.Created
	if do.Region != nil {
		d.Status.Region = do.Region.Slug
	}
	observePrice(d, do)
}

// observeActivity records Ready from the observed status and address.
func (h *handler) observeActivity(d *v1alpha1.Droplet) {
	ready := d.Status.Status == "active" && d.Status.PublicIPv4 != ""
	if ready {
		h.progress(d, v1alpha1.Ready, "Active", "droplet is active at "+d.Status.PublicIPv4)
	} else if !v1alpha1.Ready.IsTrue(d) {
		// Booting is the expected way to Active, not a problem: no Event.
		events.SetCondition(d, v1alpha1.Ready, false, "Booting", "droplet status is "+d.Status.Status)
	} else {
		h.pass.Transition(d, v1alpha1.Ready, false, "Booting", "droplet status is "+d.Status.Status)
	}
}
