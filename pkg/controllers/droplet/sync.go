package droplet

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/digitalocean/godo"
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	"github.com/rancher/wrangler/v3/pkg/condition"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

var everything = labels.Everything()

// lastSyncedRefresh bounds how stale status.lastSynced may get while nothing changes,
// without writing the status on every poll.
const lastSyncedRefresh = 10 * time.Minute

func (h *handler) sync(_ string, d *v1alpha1.Droplet) (*v1alpha1.Droplet, error) {
	// A droplet without a name is the placeholder for a VM whose config is invalid.
	if d == nil || d.DeletionTimestamp != nil || d.Spec.Name == "" {
		return d, nil
	}
	if vm := h.vmOf(d); vm != nil && vm.DeletionTimestamp != nil {
		// Nothing to create or re-read: the VM's cleanup deletes this Droplet
		// next, and the reaper may have deleted its droplet already.
		return d, nil
	}
	orig := d
	d = d.DeepCopy()
	client, err := h.client(d)
	if err != nil && d.Status.DropletID != 0 {
		// The droplet runs without the token; only its re-reads need it. Its
		// VM is not warned: its Environment is, and a deletion says so when
		// it needs the token.
		logFor(d).WithError(err).Debug("cannot re-read the droplet without its token")
		return h.finish(orig, d, nil, h.opts.ActiveResync)
	}
	if err != nil {
		return h.finish(orig, d, h.fail(d, v1alpha1.Created, "TokenUnavailable", err.Error()))
	}
	var requeue time.Duration
	if d.Status.DropletID == 0 {
		if _, stale := h.recorded.Load(d.UID); stale {
			// This process wrote the droplet's ID already and the cache lags:
			// the watch brings that copy, and looking the droplet up again
			// now would cost a request and a conflicting write.
			return orig, nil
		}
		if d.Spec.ClaimedDropletID != 0 {
			// Taken from a warm pool: the user waits, as for a create.
			ctx, cancel := digitalocean.CallContext(h.ctx, digitalocean.PriorityCreate)
			defer cancel()
			requeue, err = h.adoptClaimed(ctx, client, d)
		} else {
			ctx, cancel := digitalocean.CallContext(h.ctx, createPriority(d))
			defer cancel()
			requeue, err = h.create(ctx, client, d)
		}
	} else {
		ctx, cancel := digitalocean.CallContext(h.ctx, digitalocean.PriorityResync)
		defer cancel()
		requeue, err = h.refresh(ctx, client, d)
	}
	if err != nil {
		return h.finish(orig, d, err)
	}
	return h.finish(orig, d, nil, requeue)
}

// createPriority puts a warm pool's refill behind creates a user waits for.
func createPriority(d *v1alpha1.Droplet) digitalocean.Priority {
	if IsPoolMember(d) {
		return digitalocean.PriorityPool
	}
	return digitalocean.PriorityCreate
}

// noteRecorded remembers that d's droplet ID is written.
func (h *handler) noteRecorded(d *v1alpha1.Droplet) {
	if d.Status.DropletID != 0 {
		h.recorded.Store(d.UID, true)
	}
}

// finish writes a changed status, schedules the next look and passes on err.
func (h *handler) finish(orig, d *v1alpha1.Droplet, err error, requeue ...time.Duration) (*v1alpha1.Droplet, error) {
	StampState(d)
	held := h.takeHeld(d)
	if !equality.Semantic.DeepEqual(orig.Status, d.Status) {
		events.MarkConfigValid(d)
		now := metav1.Now()
		d.Status.LastSynced = &now
		updated, uerr := h.droplets.UpdateStatus(d)
		if uerr != nil {
			// A conflict is re-queued by the watch; a create is found again by
			// its tag. The next pass records the same transitions, Events and all.
			return orig, uerr
		}
		d = updated
		h.noteRecorded(d)
	}
	held.Flush()
	if err != nil {
		return d, err
	}
	for _, after := range requeue {
		if after > 0 {
			h.droplets.EnqueueAfter(d.Namespace, d.Name, after)
		}
	}
	return d, nil
}

func (h *handler) client(d *v1alpha1.Droplet) (*godo.Client, error) {
	token, err := digitalocean.ReadToken(h.secrets, d.Namespace, d.Spec.TokenSecretRef)
	if err != nil {
		return nil, err
	}
	return h.clients.For(token)
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

	if !hasFinalizer(d, CleanupHandlerName) {
		// Made without it (the VM controller makes it with the finalizer on),
		// and wrangler's remove handler, which runs first, could not add the
		// finalizer (its write conflicted): a droplet created before it is
		// there leaks if the Droplet is deleted meanwhile (its VM deleted
		// right away). The next pass retries.
		return 0, nil
	}
	uid := vmUID(d)
	if uid == "" {
		return 0, h.fail(d, v1alpha1.Created, "InvalidSpec", "spec.tags has no hfdo-vm: tag naming the VM's UID; delete this Droplet so it is rebuilt")
	}
	if _, busy := h.inBatch.Load(objectKey(d)); busy {
		// Another worker's multi-create is sending it. Its status write
		// re-queues it, but a write that fails, or a claim that ends without
		// one (the intent's write conflicted), would leave it waiting forever.
		return batchPoll, nil
	}
	if wait := max(settling(d), h.refusedPause(d)); wait > 0 {
		return wait, nil
	}
	if h.mayExist(d) {
		existing, err := h.findExisting(ctx, client, d)
		if err != nil {
			return h.failDO(d, v1alpha1.Created, err), nil
		}
		// Backoff counts failed calls in a row, not failed passes: a pass makes
		// several calls, and under a steady error rate whole passes fail so often
		// that the delay would grow to its cap although DigitalOcean answers.
		h.backoff.Reset(objectKey(d))
		if existing != nil {
			log.WithField("droplet", existing.ID).Info("adopting existing droplet")
			h.observe(d, existing)
			h.transition(d, v1alpha1.Created, true, "Adopted", fmt.Sprintf("adopted droplet %d found by its tag", existing.ID))
			return h.opts.BootResync, nil
		}
	}

	if freshForCreate(d) && sharesKey(d) {
		mates := h.batchMates(d)
		if wait := h.gathering(d); wait > 0 && len(mates) < maxBatch-1 {
			return wait, nil
		}
		if len(mates) > 0 {
			return h.createBatch(ctx, client, d, mates, keyIDs)
		}
	}
	onlyRefused := v1alpha1.NeverSent(d) || d.Status.NotCreated
	if err := h.recordIntent(d, ""); err != nil {
		return 0, err
	}
	created, _, err := client.Droplets.Create(ctx, createRequest(d, keyIDs))
	if err != nil {
		return h.failCreate(d, err, onlyRefused), nil
	}
	h.markCreated(d, created, fmt.Sprintf("droplet %d created in %s", created.ID, d.Spec.Region))
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

// refusedCreatePause spaces out creates DigitalOcean refused (422, 401) of
// an unchanged spec, which the re-queue after the status write would
// otherwise resend many times a second: slow enough not to matter to the
// rate limit, soon enough after a fix elsewhere (a token, a limit).
const refusedCreatePause = time.Minute

type refusal struct {
	generation int64
	at         time.Time
}

// refusedPause is how much longer d's refused create waits.
func (h *handler) refusedPause(d *v1alpha1.Droplet) time.Duration {
	v, ok := h.refused.Load(objectKey(d))
	if !ok || v.(refusal).generation != d.Generation {
		return 0
	}
	return refusedCreatePause - time.Since(v.(refusal).at)
}

// failCreate records a failed create and says when to look again.
// onlyRefused: every create sent for d before this one was refused, so a
// refusal of this one too means DigitalOcean has nothing of d's.
func (h *handler) failCreate(d *v1alpha1.Droplet, err error, onlyRefused bool) time.Duration {
	f := digitalocean.Classify(err)
	d.Status.NotCreated = onlyRefused && digitalocean.IsRefusal(err)
	reason, message := f.Reason, f.Message
	if f.Reason == "Unavailable" {
		// No answer or a 5xx: the droplet may exist.
		reason, message = reasonCreateUnconfirmed, f.Message+"; the droplet may exist, so it is looked for before any new create"
	}
	after := h.recordFailure(d, v1alpha1.Created, f, reason, message)
	if f.Permanent {
		h.refused.Store(objectKey(d), refusal{generation: d.Generation, at: time.Now()})
		after = min(after, refusedCreatePause)
	}
	if f.Reason == "Unavailable" {
		// Give the tag listing time to show it before the next pass looks.
		after = max(after, digitalocean.CreateSettle)
	}
	return after
}

// markCreated records DigitalOcean's answer to a create.
func (h *handler) markCreated(d *v1alpha1.Droplet, created *godo.Droplet, message string) {
	h.created.Store(vmUID(d), created.ID)
	h.readySince.Delete(objectKey(d))
	h.refused.Delete(objectKey(d))
	h.backoff.Reset(objectKey(d))
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
func (h *handler) recordIntent(d *v1alpha1.Droplet, batch string) error {
	intent := d.DeepCopy()
	intent.Status.CreateBatch = batch
	// From here on the create may reach DigitalOcean.
	intent.Status.NotCreated = false
	events.MarkConfigValid(intent)
	events.SetCondition(intent, v1alpha1.Created, false, "Creating", "creating the droplet in DigitalOcean")
	StampState(intent)
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
	if IsPoolMember(d) {
		// Its identity tag is new, and no earlier Droplet had it.
		return false
	}
	vm := h.vmOf(d)
	return vm == nil || vm.Annotations[v1alpha1.KnownDropletAnnotation] != ""
}

// findExisting returns the VM's droplet if this process created it, its
// batch or its VM tag lists it, or the VM has it on record.
func (h *handler) findExisting(ctx context.Context, client *godo.Client, d *v1alpha1.Droplet) (*godo.Droplet, error) {
	uid := vmUID(d)
	if id, ok := h.created.Load(uid); ok {
		return h.getCreated(ctx, client, id.(int))
	}
	if d.Status.CreateBatch != "" {
		if found, err := findInBatch(ctx, client, d); err != nil || found != nil {
			return found, err
		}
	}
	if found, err := findByTag(ctx, client, digitalocean.VMTag(uid)); err != nil || found != nil {
		return found, err
	}
	if id := knownDropletID(h.vmOf(d)); id != 0 {
		found, _, err := client.Droplets.Get(ctx, id)
		if digitalocean.IsNotFound(err) {
			return nil, nil
		}
		return found, err
	}
	return nil, nil
}

// getCreated reads a droplet this process created. Not visible yet right
// after the create, it is adopted by ID all the same, since creating again
// is how duplicates happen.
func (h *handler) getCreated(ctx context.Context, client *godo.Client, id int) (*godo.Droplet, error) {
	d, _, err := client.Droplets.Get(ctx, id)
	if err == nil {
		return d, nil
	}
	if !digitalocean.IsNotFound(err) {
		return nil, err
	}
	return &godo.Droplet{ID: id, Status: "new"}, nil
}

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
	current, err := h.read(ctx, client, d, maxAge)
	if digitalocean.IsHeldBack(err) {
		// Not a problem of the droplet's: this controller chose to wait for
		// room in the token's budget. Nothing to record.
		return h.backoff.Delay(objectKey(d), digitalocean.Classify(err)), nil
	}
	if digitalocean.IsNotFound(err) {
		// Never recreate here: right after a create DigitalOcean may not know the
		// droplet yet, and a second droplet is worse than a late one.
		h.transition(d, v1alpha1.Ready, false, "NotFound", fmt.Sprintf("DigitalOcean does not know droplet %d", d.Status.DropletID))
		return h.opts.BootResync, nil
	}
	if err != nil {
		return h.failDO(d, v1alpha1.Ready, err), nil
	}
	h.backoff.Reset(objectKey(d))
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
// list lacks is asked for by id, which tells gone from not listed yet.
func (h *handler) read(ctx context.Context, client *godo.Client, d *v1alpha1.Droplet, maxAge time.Duration) (*godo.Droplet, error) {
	id := d.Status.DropletID
	if h.fleet != nil {
		listed, err := h.fleet.get(client, id, maxAge, listableFrom(d))
		if err != nil || listed != nil {
			return listed, err
		}
	}
	current, _, err := client.Droplets.Get(ctx, id)
	return current, err
}

// listableAt is when a list can first show d's droplet: a second after
// DigitalOcean's created_at, which it gives to the second.
func listableAt(d *v1alpha1.Droplet) (time.Time, bool) {
	created, err := time.Parse(time.RFC3339, d.Status.CreatedAt)
	return created.Add(time.Second), err == nil
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
	d.Status.Status = do.Status
	d.Status.PublicIPv4, _ = do.PublicIPv4()
	d.Status.PrivateIPv4, _ = do.PrivateIPv4()
	d.Status.PublicIPv6, _ = do.PublicIPv6()
	d.Status.CreatedAt = do.Created
	if do.Region != nil {
		d.Status.Region = do.Region.Slug
	}
	observePrice(d, do)
	ready := do.Status == "active" && d.Status.PublicIPv4 != ""
	if ready {
		h.progress(d, v1alpha1.Ready, "Active", "droplet is active at "+d.Status.PublicIPv4)
	} else if !v1alpha1.Ready.IsTrue(d) {
		// Booting is the expected way to Active, not a problem: no Event.
		events.SetCondition(d, v1alpha1.Ready, false, "Booting", "droplet status is "+do.Status)
	} else {
		h.transition(d, v1alpha1.Ready, false, "Booting", "droplet status is "+do.Status)
	}
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

// failDO records a DigitalOcean error on cond and says when to look again.
func (h *handler) failDO(d *v1alpha1.Droplet, cond condition.Cond, err error) time.Duration {
	f := digitalocean.Classify(err)
	return h.recordFailure(d, cond, f, f.Reason, f.Message)
}

// recordFailure records f on cond under reason and message (one condition
// change, so one Event) and says when to look again.
func (h *handler) recordFailure(d *v1alpha1.Droplet, cond condition.Cond, f digitalocean.Failure, reason, message string) time.Duration {
	metrics.ReconcileErrors.WithLabelValues("Droplet", f.Reason).Inc()
	if f.Permanent {
		// Nothing changes until someone fixes what was refused: say what and where.
		message = f.Explain(origin(d), func(key string) string { return settingValue(d, key) })
	}
	logFor(d).WithField("reason", reason).Warn(message)
	h.transition(d, cond, false, reason, message)
	return h.backoff.Delay(objectKey(d), f)
}

func objectKey(d *v1alpha1.Droplet) string { return d.Namespace + "/" + d.Name }

// hasFinalizer reports the finalizer of wrangler's remove handler named handler.
func hasFinalizer(obj metav1.Object, handler string) bool {
	return slices.Contains(obj.GetFinalizers(), "wrangler.cattle.io/"+handler)
}

// fail records a non-DigitalOcean problem; the watch on its cause re-enqueues.
func (h *handler) fail(d *v1alpha1.Droplet, cond condition.Cond, reason, message string) error {
	metrics.ReconcileErrors.WithLabelValues("Droplet", reason).Inc()
	logFor(d).WithField("reason", reason).Warn(message)
	h.transition(d, cond, false, reason, message)
	return nil
}

// progress records a step on the way to a running VM: an Event on the
// Droplet only when its VM will not announce the step itself (it does for
// the first create and the first boot, see virtualmachine's announce). One
// Event per step instead of two is a write less per VM and step in a flood.
func (h *handler) progress(d *v1alpha1.Droplet, cond condition.Cond, reason, message string) {
	vm := h.vmOf(d)
	announced := vm != nil && vm.DeletionTimestamp == nil && !slices.Contains(vmStatusesAfter[cond], vm.Status.Status)
	if announced || IsPoolMember(d) {
		// A pool member's steps are nobody's news: its pool counts them.
		events.SetCondition(d, cond, true, reason, message)
		return
	}
	h.transition(d, cond, true, reason, message)
}

// vmStatusesAfter are the VM statuses from which the VM no longer announces
// the step cond stands for.
var vmStatusesAfter = map[condition.Cond][]hfv1.VmStatus{
	v1alpha1.Created:   {hfv1.VmStatusProvisioned, hfv1.VmStatusRunning},
	v1alpha1.Ready:     {hfv1.VmStatusRunning},
	v1alpha1.Reachable: {hfv1.VmStatusRunning},
}

// transition records a condition change as an Event on the Droplet, and on
// its VM too when it is a problem: the VM's own Events tell its progress.
// The Events wait for the status write that records the change (finish).
func (h *handler) transition(d *v1alpha1.Droplet, cond condition.Cond, ok bool, reason, message string) {
	v, _ := h.held.LoadOrStore(d.UID, events.NewBuffer(h.recorder))
	held := v.(*events.Buffer)
	if ok {
		events.Transition(held, d, cond, ok, reason, message, d)
		return
	}
	events.Transition(held, d, cond, ok, reason, message, d, h.vmOf(d))
}

// takeHeld takes the Events held for d's status write, to record once it
// succeeded; a write that fails drops them.
func (h *handler) takeHeld(d *v1alpha1.Droplet) *events.Buffer {
	if v, ok := h.held.LoadAndDelete(d.UID); ok {
		return v.(*events.Buffer)
	}
	return events.NewBuffer(h.recorder)
}
