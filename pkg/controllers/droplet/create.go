package droplet

// The create path: a Droplet without a droplet ID gets one, adopted when
// DigitalOcean may have it already (mayExist, findExisting), else created
// alone here or with mates in one request (create_batch.go). The intent is on
// record before any create is sent (recordIntent).

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/digitalocean/godo"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/finalizer"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/statecolumn"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
	"k8s.io/client-go/tools/cache"
)

// createPriority puts a warm pool's refill behind creates a user waits for.
func createPriority(d *v1alpha1.Droplet) digitalocean.Priority {
	if d.IsPoolMember() {
		return digitalocean.PriorityPool
	}
	return digitalocean.PriorityCreate
}

// create adopts the VM's droplet if DigitalOcean already has it, and creates it otherwise.
func (h *handler) create(ctx context.Context, client *godo.Client, d *v1alpha1.Droplet) (time.Duration, error) {
	log := logFor(d)
	keyIDs, waiting := h.keyIDs(d)
	if waiting != "" {
		// The Key's change re-enqueues this droplet. A record of a create
		// already sent stays: it is what makes the next pass look first.
		if v1alpha1.NeverSent(d) {
			events.SetCondition(d, v1alpha1.Created, false, v1alpha1.ReasonWaitingForKey, waiting)
		}
		return 0, nil
	}

	if !finalizer.Has(d, finalizer.DropletCleanupHandler) {
		// Made without it (the VM controller makes it with the finalizer on),
		// and wrangler's remove handler, which runs first, could not add the
		// finalizer (its write conflicted): a droplet created before it is
		// there leaks if the Droplet is deleted meanwhile (its VM deleted
		// right away). The next pass retries.
		return 0, nil
	}
	uid := vmUID(d)
	if uid == "" {
		h.pass.Fail(d, v1alpha1.Created, "InvalidSpec", "spec.tags has no hfdo-vm: tag naming the VM's UID; delete this Droplet so it is rebuilt")
		return 0, nil
	}
	if h.notes.inBatch(d) {
		// Another worker's multi-create is sending it. Its status write
		// re-queues it, but a write that fails, or a claim that ends without
		// one (the intent's write conflicted), would leave it waiting forever.
		return batchPoll, nil
	}
	if wait := max(settling(d), h.refusedPause(d)); wait > 0 {
		return wait, nil
	}
	if wait := h.clients.Room(client, createPriority(d)); wait > 0 {
		// The limiter would hold the request back: asking now costs no
		// intent write, and a Droplet never sent stays one, so its next
		// pass needs no lookup and may still join a multi-create.
		return wait, nil
	}
	if h.mayExist(d) {
		existing, err := h.findExisting(ctx, client, d)
		if err != nil {
			return h.pass.FailDO(d, v1alpha1.Created, err), nil
		}
		// Backoff counts failed calls in a row, not failed passes: a pass makes
		// several calls, and under a steady error rate whole passes fail so often
		// that the delay would grow to its cap although DigitalOcean answers.
		h.pass.Succeeded(d)
		if existing != nil {
			log.WithField("droplet", existing.ID).Info("adopting existing droplet")
			h.observe(d, existing)
			h.pass.Transition(d, v1alpha1.Created, true, "Adopted", fmt.Sprintf("adopted droplet %d found in DigitalOcean", existing.ID))
			return h.opts.BootResync, nil
		}
	}

	onlyRefused := v1alpha1.NeverSent(d) || d.Status.NotCreated
	where := h.place(d)
	if where.region == "" {
		// Nothing is sent, so DigitalOcean still has nothing of d's.
		d.Status.NotCreated = onlyRefused
		return h.allSoldOut(d, where), nil
	}
	if freshForCreate(d) && sharesKey(d) {
		mates := h.batchMates(d)
		if wait := h.gathering(client, d); wait > 0 && len(mates) < maxBatch-1 {
			return wait, nil
		}
		if len(mates) > 0 {
			return h.createBatch(ctx, client, d, mates, keyIDs, where)
		}
	}
	if err := h.recordIntent(d, "", h.buckets.take(1)); err != nil {
		return 0, err
	}
	req := createRequest(d, keyIDs, where)
	req.Tags = slices.Concat(req.Tags, nonEmpty(d.Status.BootTag))
	created, err := digitalocean.DropletsOf(client).Create(ctx, req, createPriority(d))
	if err != nil {
		return h.failCreate(client, d, err, onlyRefused, where.region), nil
	}
	h.markCreated(d, created, where.region, fmt.Sprintf("droplet %d created in %s%s", created.ID, where.region, where.note()))
	return h.opts.BootResync, nil
}

// reasonCreateUnconfirmed: a create got no answer, or a 5xx.
const reasonCreateUnconfirmed = "CreateUnconfirmed"

// settling is how much longer to wait before looking for the droplet of a
// create whose outcome is unknown (see CreateSettle): the status write that
// records the failure re-queues the Droplet at once.
func settling(d *v1alpha1.Droplet) time.Duration {
	if v1alpha1.Created.GetReason(d) != reasonCreateUnconfirmed {
		return 0
	}
	failed, err := time.Parse(time.RFC3339, v1alpha1.Created.GetLastUpdated(d))
	if err != nil {
		return 0
	}
	return digitalocean.CreateSettle - time.Since(failed)
}

// DefaultRefusedCreatePause spaces out creates DigitalOcean refused (422,
// 401) of an unchanged spec, which the re-queue after the status write
// would otherwise resend many times a second: slow enough not to matter to
// the rate limit, soon enough after a fix elsewhere (a token, a limit).
const DefaultRefusedCreatePause = time.Minute

// refusedCreatePause is Options.RefusedCreatePause, or its default.
func (h *handler) refusedCreatePause() time.Duration {
	return cmp.Or(h.opts.RefusedCreatePause, DefaultRefusedCreatePause)
}

// refusedPause is how much longer d's refused create waits. One refused
// for the droplet limit waits its turn (limitWaits): let go, it tries at
// once; first in line, after the pause; behind others, until let go (or
// the pause, should it never be).
func (h *handler) refusedPause(d *v1alpha1.Droplet) time.Duration {
	at, ok := h.notes.refusedAt(d)
	if !ok {
		return 0
	}
	waiting, free, first := h.limits.state(cache.MetaObjectToName(d).String())
	switch {
	case free:
		return 0
	case waiting && !first:
		return h.refusedCreatePause()
	}
	return h.refusedCreatePause() - time.Since(at)
}

// failCreate records a failed create sent to region and says when to look
// again. onlyRefused: every create sent for d before this one was refused,
// so a refusal of this one too means DigitalOcean has nothing of d's.
func (h *handler) failCreate(client *godo.Client, d *v1alpha1.Droplet, err error, onlyRefused bool, region string) time.Duration {
	f := digitalocean.Classify(err)
	if onlyRefused && digitalocean.IsHeldBack(err) {
		// This controller's limiter kept the request: nothing was sent, so
		// the Droplet is still one never sent. Left as RateLimited, every
		// retry would first look it up, a request each, and such lookups
		// take the budget the lists of booting droplets need.
		events.SetCondition(d, v1alpha1.Created, false, v1alpha1.ReasonWaitingForRoom, f.Message)
		return f.RetryAfter
	}
	d.Status.NotCreated = onlyRefused && digitalocean.IsRefusal(err)
	key := cache.MetaObjectToName(d).String()
	if digitalocean.IsSoldOut(err) {
		h.soldOut.mark(region, d.Spec.Size, f.Message)
		if d.Status.NotCreated {
			// Nothing was made: no lookup before the next region's create.
			h.limits.done(key)
			return h.toNextRegion(d, region)
		}
	}
	if digitalocean.IsDropletLimit(err) {
		h.limits.wait(client, key)
		f.Message += h.limitReached(client, d)
	} else {
		h.limits.done(key)
	}
	reason, message := f.Reason, f.Message
	if f.Reason == "Unavailable" {
		// No answer or a 5xx: the droplet may exist.
		reason, message = reasonCreateUnconfirmed, f.Message+"; the droplet may exist, so it is looked for before any new create"
	}
	after := h.pass.RecordFailure(d, v1alpha1.Created, f, reason, message)
	if f.Permanent {
		h.notes.noteRefused(d)
		after = min(after, h.refusedCreatePause())
	}
	if f.Reason == "Unavailable" {
		// Give the tag listing time to show it before the next pass looks.
		after = max(after, digitalocean.CreateSettle)
	}
	return after
}

// markCreated records DigitalOcean's answer to a create sent to region.
func (h *handler) markCreated(d *v1alpha1.Droplet, created *godo.Droplet, region, message string) {
	if created.Region == nil {
		created.Region = &godo.Region{Slug: region}
	}
	h.notes.noteCreated(d, created.ID)
	h.limits.done(cache.MetaObjectToName(d).String())
	h.pass.Succeeded(d)
	logFor(d).WithField("droplet", created.ID).Info("droplet created")
	h.observe(d, created)
	h.progress(d, v1alpha1.Created, "Created", message)
}

// recordIntent writes Created=False/Creating before the create is sent, and
// d becomes the written object. Two reasons:
//   - the write is conditional on d's resourceVersion, so a create is never
//     sent from a stale cached copy (one that lacks the ID a previous pass
//     stored): that copy fails here with a conflict and is retried;
//   - cleanup trusts a Droplet without a Created condition never to have
//     reached DigitalOcean; with the intent on record first, that holds even
//     when the create's answer or the status write after it is lost.
func (h *handler) recordIntent(d *v1alpha1.Droplet, batch, bootTag string) error {
	intent := d.DeepCopy()
	intent.Status.CreateBatch = batch
	intent.Status.BootTag = bootTag
	intent.Status.CreateTag = ""
	if batch == "" {
		intent.Status.CreateTag = h.createTag(d)
	}
	// From here on the create may reach DigitalOcean.
	intent.Status.NotCreated = false
	events.MarkConfigValid(intent)
	events.SetCondition(intent, v1alpha1.Created, false, v1alpha1.ReasonCreating, "creating the droplet in DigitalOcean")
	statecolumn.StampDroplet(intent)
	updated, err := h.droplets.UpdateStatus(intent)
	if err != nil {
		return err
	}
	*d = *updated
	return nil
}

// mayExist: a droplet may already exist for d. Not so for a Droplet never
// sent to DigitalOcean (no Created condition: recordIntent writes one before
// any create) whose VM has no earlier Droplet's droplet on record (cleanup
// writes it on the VM when a Droplet goes while its VM stays). Skipping the
// lookup then saves one request per new VM.
func (h *handler) mayExist(d *v1alpha1.Droplet) bool {
	if !freshForCreate(d) {
		return true
	}
	if d.IsPoolMember() {
		// A pool member's name is new: no earlier Droplet had it.
		return false
	}
	vm := h.vmOf(d)
	return vm == nil || vm.Annotations[v1alpha1.KnownDropletAnnotation] != ""
}

// findExisting returns the VM's droplet if this process created it, its
// batch or its name lists it, or the VM has it on record.
func (h *handler) findExisting(ctx context.Context, client *godo.Client, d *v1alpha1.Droplet) (*godo.Droplet, error) {
	if id, ok := h.notes.createdID(d); ok {
		return h.getCreated(ctx, client, id, createPriority(d))
	}
	if d.Status.CreateBatch != "" {
		if found, err := findInBatch(ctx, client, d, createPriority(d)); err != nil || found != nil {
			return found, err
		}
	}
	if found, err := h.findByName(ctx, client, d, createPriority(d)); err != nil || len(found) > 0 {
		return first(found), err
	}
	if id := knownDropletID(h.vmOf(d)); id != 0 {
		return digitalocean.DropletsOf(client).Get(ctx, id, createPriority(d))
	}
	return nil, nil
}

// getCreated reads a droplet this process created. Not visible yet right
// after the create, it is adopted by ID all the same, since creating again
// is how duplicates happen.
func (h *handler) getCreated(ctx context.Context, client *godo.Client, id int, p digitalocean.Priority) (*godo.Droplet, error) {
	d, err := digitalocean.DropletsOf(client).Get(ctx, id, p)
	if err != nil || d != nil {
		return d, err
	}
	return &godo.Droplet{ID: id, Status: "new"}, nil
}

// keyIDs returns the DigitalOcean key ids, or why they are not known yet.
func (h *handler) keyIDs(d *v1alpha1.Droplet) ([]godo.DropletCreateSSHKey, string) {
	var out []godo.DropletCreateSSHKey
	for _, name := range d.Spec.KeyRefs {
		k, err := h.keys.Get(d.Namespace, name)
		if err != nil {
			k = nil
		}
		if k == nil || k.Status.KeyID == 0 {
			return nil, waitingForKey(name, k)
		}
		out = append(out, godo.DropletCreateSSHKey{ID: k.Status.KeyID})
	}
	return out, ""
}

// waitingForKey says why a create waits for the Key name (nil when not
// found), with the Key's state when that names a problem: the Droplet's
// MESSAGE then points at the cause.
func waitingForKey(name string, k *v1alpha1.Key) string {
	message := fmt.Sprintf("waiting for Key %q to be created in DigitalOcean", name)
	if k != nil && k.Status.State != "" && k.Status.State != v1alpha1.KeyStateCreating {
		message += fmt.Sprintf(" (the Key is %s: %s)", k.Status.State, k.Status.Message)
	}
	return message
}
