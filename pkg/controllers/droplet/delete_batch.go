package droplet

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/digitalocean/godo"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	"github.com/sirupsen/logrus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

const (
	// deleteGather is how long a batched delete waits for more deleted VMs
	// after its first: a finished event's VMs go over a moment, and one
	// batch costs three requests however many droplets it holds.
	deleteGather = 300 * time.Millisecond
	// maxDeleteBatch droplets go at once, without waiting for the window.
	maxDeleteBatch = 100
	// deleteBatchAttempts bounds one VM's failed batches; then the
	// Droplet's cleanup deletes by itself, as it always may.
	deleteBatchAttempts = 5
	// deletePendingPoll is how soon a Droplet's cleanup looks again while
	// its VM's droplets wait in a batch.
	deletePendingPoll = time.Second
	// DefaultDeleteTagReuse is how long a token's delete tag is kept after
	// its last batch for the next one: the batches of one event's end
	// share a tag, two requests a batch instead of three.
	DefaultDeleteTagReuse = time.Minute
)

// deleteBatcher deletes, per token, the droplets the reaper hands it in
// batches: a one-off tag, one request tagging every droplet of the batch,
// and one delete by that tag. Only droplets of VMs being deleted are
// tagged (checked against the caches right before), and a deletion
// timestamp never goes away, so a tag a crash leaves on droplets marks only
// droplets that are to go anyway: the next process's reaper sends them in
// a new batch under a new tag.
//
// It runs in its own goroutine per token; no handler waits for it. What it
// deleted it records as gone (processNotes), so the Droplet's cleanup sends
// nothing again and releases the finalizer; until then that cleanup waits
// (pending), and an entry that keeps failing is handed back to it.
type deleteBatcher struct {
	h       *handler
	backoff *digitalocean.Backoff
	// reuse is how long a queue keeps its delete tag after a batch.
	reuse time.Duration

	mu     sync.Mutex
	queues map[*godo.Client]*deleteQueue
	// pending are the VM UIDs with an entry queued or being sent.
	pending map[string]bool
}

// deleteQueue is one token's entries waiting for a batch.
type deleteQueue struct {
	entries []*deleteEntry
	// wake is signalled by each add.
	wake chan struct{}
	// tag is the delete tag a successful batch used, kept for the next one
	// (see NewDeleteTag), and marked in use until released; "" if none.
	// Only the queue's goroutine touches it.
	tag     string
	release func()
}

// deleteTag is q's kept tag, or a new one (fresh) marked in use.
func (q *deleteQueue) deleteTag(clients *digitalocean.Clients) (tag string, fresh bool) {
	if q.tag != "" {
		return q.tag, false
	}
	q.tag = digitalocean.NewDeleteTag()
	q.release = clients.UseTag(q.tag)
	return q.tag, true
}

// dropTag stops using q's tag: after a failed batch (droplets may be left
// under it), or once no batch has needed it for the batcher's reuse period
// (the tag tidy deletes it then).
func (q *deleteQueue) dropTag() {
	if q.tag != "" {
		q.release()
		q.tag, q.release = "", nil
	}
}

// idle fires when q's kept tag has waited reuse for a batch.
func (q *deleteQueue) idle(reuse time.Duration) <-chan time.Time {
	if q.tag == "" {
		return nil
	}
	return time.After(reuse)
}

// deleteEntry is one deleted VM's droplets, as the reaper found them.
type deleteEntry struct {
	d        *v1alpha1.Droplet
	targets  deleteTargets
	failures int
}

func newDeleteBatcher(h *handler) *deleteBatcher {
	reuse := h.opts.DeleteTagReuse
	if reuse <= 0 {
		reuse = DefaultDeleteTagReuse
	}
	return &deleteBatcher{h: h, backoff: digitalocean.NewBackoff(), reuse: reuse,
		queues: map[*godo.Client]*deleteQueue{}, pending: map[string]bool{}}
}

// batchable: targets are droplet IDs alone, as they are for every droplet
// whose ID is known, however it was made. What a create whose answer is
// not in made is looked up by its name, in the Droplet's cleanup.
func (t deleteTargets) batchable() bool { return t.unanswered == nil && len(t.ids) > 0 }

// add queues d's targets for client's next batch, once per VM.
func (b *deleteBatcher) add(client *godo.Client, d *v1alpha1.Droplet, t deleteTargets) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pending[vmUID(d)] {
		return
	}
	b.pending[vmUID(d)] = true
	q := b.queues[client]
	if q == nil {
		q = &deleteQueue{wake: make(chan struct{}, 1)}
		b.queues[client] = q
		go b.run(client, q)
	}
	q.entries = append(q.entries, &deleteEntry{d: d, targets: t})
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// isPending: d's VM's droplets wait in a batch or are being sent. A nil
// batcher (deletes one by one) has none.
func (b *deleteBatcher) isPending(d *v1alpha1.Droplet) bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pending[vmUID(d)]
}

// run sends client's batches until the controller stops.
func (b *deleteBatcher) run(client *godo.Client, q *deleteQueue) {
	ctx := b.h.ctx
	defer q.dropTag()
	for {
		select {
		case <-ctx.Done():
			return
		case <-q.idle(b.reuse):
			q.dropTag()
			continue
		case <-q.wake:
		}
		for b.queued(q) > 0 {
			if !b.gather(q) {
				return
			}
			if retry := b.sendBatch(client, q, b.take(q)); retry > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(retry):
				}
			}
		}
	}
}

// gather waits out the window, or until a full batch is queued; false
// once the controller stops.
func (b *deleteBatcher) gather(q *deleteQueue) bool {
	window := time.NewTimer(deleteGather)
	defer window.Stop()
	for b.queued(q) < maxDeleteBatch {
		select {
		case <-b.h.ctx.Done():
			return false
		case <-window.C:
			return true
		case <-q.wake:
		}
	}
	return true
}

func (b *deleteBatcher) queued(q *deleteQueue) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(q.entries)
}

// take removes the next batch from q: whole entries, up to maxDeleteBatch
// droplets (an entry alone over it still goes).
func (b *deleteBatcher) take(q *deleteQueue) []*deleteEntry {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, droplets := 0, 0
	for n < len(q.entries) && (n == 0 || droplets+len(q.entries[n].targets.ids) <= maxDeleteBatch) {
		droplets += len(q.entries[n].targets.ids)
		n++
	}
	batch := q.entries[:n:n]
	q.entries = q.entries[n:]
	return batch
}

// putBack returns entries to the front of client's queue, to go first.
func (b *deleteBatcher) putBack(client *godo.Client, entries []*deleteEntry) {
	if len(entries) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queues[client]
	q.entries = append(append([]*deleteEntry(nil), entries...), q.entries...)
}

// done ends e's stay in the batcher, and has its Droplet looked at: its
// cleanup either finds its targets reaped or deletes them itself.
func (b *deleteBatcher) done(e *deleteEntry) {
	b.mu.Lock()
	delete(b.pending, vmUID(e.d))
	b.mu.Unlock()
	b.h.droplets.Enqueue(e.d.Namespace, e.d.Name)
}

// sendBatch deletes one batch and says how long to wait before the next after
// a failure (0: go on).
func (b *deleteBatcher) sendBatch(client *godo.Client, q *deleteQueue, batch []*deleteEntry) time.Duration {
	batch = b.recheck(batch)
	var ids []int
	for _, e := range batch {
		ids = append(ids, e.targets.ids...)
	}
	ids = slices.DeleteFunc(ids, b.h.notes.isGone)
	if len(ids) == 0 {
		// Deleted by another path (a cleanup, a pool member's) meanwhile.
		for _, e := range batch {
			b.reaped(e, "deleted in DigitalOcean already")
		}
		return 0
	}
	ctx, cancel := digitalocean.CallContext(b.h.ctx)
	defer cancel()
	tag, fresh := q.deleteTag(b.h.clients)
	var err error
	if fresh {
		err = digitalocean.DropletsOf(client).Tag(ctx, tag, ids, digitalocean.PriorityDelete)
	} else {
		err = digitalocean.DropletsOf(client).TagMore(ctx, tag, ids, digitalocean.PriorityDelete)
	}
	if err == nil {
		err = digitalocean.DropletsOf(client).DeleteByTag(ctx, tag)
	}
	if err != nil {
		q.dropTag()
	}
	backoffKey := fmt.Sprintf("%p", client)
	switch {
	case err == nil:
		b.h.notes.noteGone(ids...)
		b.h.limits.freed(client, len(ids))
		metrics.DeleteBatches.Inc()
		metrics.DeleteBatchDroplets.Observe(float64(len(ids)))
		for _, e := range batch {
			b.reaped(e, fmt.Sprintf("deleted in DigitalOcean with %d others in one batch", len(batch)-1))
		}
		b.backoff.Reset(backoffKey)
		return 0
	case digitalocean.IsNotFound(err):
		// A droplet of the batch is gone already (an earlier batch's delete
		// whose answer was lost, a delete by hand): one by one, where a 404
		// counts as gone.
		metrics.DeleteBatchFallbacks.Inc()
		failed, failure := oneByOne(batch, func(e *deleteEntry) error { return b.h.deleteEach(ctx, client, e.targets) },
			func(e *deleteEntry) {
				b.reaped(e, "deleted in DigitalOcean on its own (a droplet of its batch was gone already)")
			})
		if len(failed) == 0 {
			return 0
		}
		batch, err = failed, failure
	}
	f := digitalocean.Classify(err)
	b.failed(client, batch, tag, f)
	return b.backoff.Delay(backoffKey, f)
}

// reaped ends e's stay once DigitalOcean confirmed its droplets deleted.
func (b *deleteBatcher) reaped(e *deleteEntry, how string) {
	logFor(e.d).WithField("droplet", e.d.Status.DropletID).Info("VM deleted; droplet " + how)
	b.done(e)
}

// failed puts a failed batch's entries back for the next batch, but for
// those out of attempts or refused for good, which their cleanup takes over.
func (b *deleteBatcher) failed(client *godo.Client, batch []*deleteEntry, tag string, f digitalocean.Failure) {
	var retry, vms []string
	var again []*deleteEntry
	for _, e := range batch {
		vms = append(vms, e.d.Spec.VirtualMachine)
		if f.Reason != "RateLimited" {
			e.failures++
		}
		if f.Permanent || e.failures >= deleteBatchAttempts {
			b.done(e)
			continue
		}
		retry = append(retry, e.d.Spec.VirtualMachine)
		again = append(again, e)
	}
	logrus.WithField("vms", strings.Join(vms, ",")).WithField("tag", tag).WithField("reason", f.Reason).
		Infof("batched droplet delete failed; %d of %d VMs retry in the next batch, the others' cleanup deletes: %s", len(retry), len(vms), f.Message)
	b.putBack(client, again)
}

// recheck keeps the entries that may still go, right before their droplets
// are tagged: the VM is being deleted (or gone), and no Droplet of another
// VM that is not being deleted holds one of their droplets (a warm pool
// hands a member's droplet to a living VM). The others leave the batcher.
func (b *deleteBatcher) recheck(batch []*deleteEntry) []*deleteEntry {
	holders, err := b.h.dropletHolders()
	var kept []*deleteEntry
	for _, e := range batch {
		why := "the Droplets could not be read: "
		if err == nil {
			why = b.h.whyNotBatched(e, holders)
		} else {
			why += err.Error()
		}
		if why == "" {
			kept = append(kept, e)
			continue
		}
		logFor(e.d).WithField("droplet", e.d.Status.DropletID).Info("left out of a batched delete: " + why)
		b.done(e)
	}
	return kept
}

// dropletHolders are the Droplets not being deleted, by each droplet ID
// they hold (recorded or claimed from a pool).
func (h *handler) dropletHolders() (map[int][]*v1alpha1.Droplet, error) {
	all, err := h.droplets.Cache().List(metav1.NamespaceAll, everything)
	if err != nil {
		return nil, err
	}
	out := map[int][]*v1alpha1.Droplet{}
	for _, d := range all {
		if d.DeletionTimestamp != nil {
			continue
		}
		for _, id := range []int{d.Status.DropletID, d.Spec.ClaimedDropletID, d.Spec.AdoptedDropletID} {
			if id != 0 {
				out[id] = append(out[id], d)
			}
		}
	}
	return out, nil
}

// whyNotBatched is "" when e's droplets may be tagged for deletion.
func (h *handler) whyNotBatched(e *deleteEntry, holders map[int][]*v1alpha1.Droplet) string {
	uid := vmUID(e.d)
	vm, err := h.vms.Get(e.d.Namespace, e.d.Spec.VirtualMachine)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return "its VM could not be read: " + err.Error()
	case string(vm.UID) == uid && vm.DeletionTimestamp == nil:
		return "its VM is not being deleted"
	}
	for _, id := range e.targets.ids {
		for _, other := range holders[id] {
			if other.UID != e.d.UID && vmUID(other) != uid {
				return fmt.Sprintf("droplet %d is held by Droplet %s, which is not being deleted", id, cache.MetaObjectToName(other).String())
			}
		}
	}
	return ""
}

// oneByOne sends each entry's delete on its own and returns those that
// failed with one of their errors: the failures are classified by that,
// not by the batch's 404 nor by the success of the entry sent last.
func oneByOne(batch []*deleteEntry, send func(*deleteEntry) error, deleted func(*deleteEntry)) ([]*deleteEntry, error) {
	var failed []*deleteEntry
	var failure error
	for _, e := range batch {
		if err := send(e); err != nil {
			failed, failure = append(failed, e), err
			continue
		}
		deleted(e)
	}
	return failed, failure
}
