package droplet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/digitalocean/godo"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/finalizer"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/statecolumn"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"k8s.io/client-go/tools/cache"
)

// maxBatch is DigitalOcean's limit of names per multi-create request.
const maxBatch = 10

// batchGather is how long a Droplet that may share a multi-create waits
// for mates before it goes with fewer than maxBatch: the VMs of an event
// arrive over a moment, and ten per request cost a tenth of the budget.
// busyBatchGather is the wait once a third of the token's budget is in
// use: then every request a fuller batch saves is room for the lists that
// notice booting droplets, which a flood's creates would otherwise crowd
// out (a flood of 1,000 VMs takes about 100 multi-creates with the longer
// wait, 150 without).
const (
	batchGather     = 250 * time.Millisecond
	busyBatchGather = 600 * time.Millisecond
	busyLoad        = 1.0 / 3
)

// sharesKey: d is made with a key other Droplets use too (ssh_key_scope:
// environment), so other Droplets may be created with it in one request.
func sharesKey(d *v1alpha1.Droplet) bool {
	return len(d.Spec.KeyRefs) == 1 && d.Spec.KeyRefs[0] != d.Name
}

// gathering is how much longer d waits for mates, counted from when it was
// first ready to create.
func (h *handler) gathering(client *godo.Client, d *v1alpha1.Droplet) time.Duration {
	gather := batchGather
	if h.clients.Load(client) >= busyLoad {
		gather = busyBatchGather
	}
	return gather - time.Since(h.notes.firstReady(d))
}

// batchPoll is how soon a Droplet that another worker's multi-create is
// sending is looked at again.
const batchPoll = time.Second

// batchKey is equal for Droplets whose create requests differ only in
// name and per-VM tags, so one multi-create can make them all. Droplets
// with keys of their own never share one: a per-VM key keeps them single.
func batchKey(d *v1alpha1.Droplet) string {
	// The region and VPC as listed: a multi-create goes to one region,
	// chosen for the whole of it.
	req := createRequest(d, nil, placement{region: d.Spec.Region})
	req.VPCUUID = d.Spec.VPCUUID
	req.Name = ""
	req.Tags = digitalocean.SharedTags(req.Tags)
	b, _ := json.Marshal(struct {
		Namespace string
		Request   *godo.DropletCreateRequest
		Keys      []string
		Token     v1alpha1.SecretKeyRef
	}{d.Namespace, req, d.Spec.KeyRefs, d.Spec.TokenSecretRef})
	return string(b)
}

// batchMates are up to maxBatch-1 other Droplets that may be created with d
// in one request: same batch key, never sent to DigitalOcean before (no
// Created condition: anything else must look itself up first), ready in
// every way d is. d shares its key (sharesKey).
func (h *handler) batchMates(d *v1alpha1.Droplet) []*v1alpha1.Droplet {
	awaiting, err := h.droplets.Cache().GetByIndex(awaitingCreateIndex, awaitingCreateKey(d))
	if err != nil {
		return nil
	}
	key := ""
	var mates []*v1alpha1.Droplet
	for _, m := range awaiting {
		// Cheap checks first: batchKey encodes the whole request.
		if m.Name == d.Name || !finalizer.Has(m, finalizer.DropletCleanupHandler) || h.notes.inBatch(m) {
			continue
		}
		if _, created := h.notes.createdID(m); created {
			continue
		}
		if waiting, free, _ := h.limits.state(cache.MetaObjectToName(m).String()); waiting && !free {
			// Its turn for the droplet limit's room has not come.
			continue
		}
		if h.refusedPause(m) > 0 {
			// Refused lately: it goes again when its pause ends.
			continue
		}
		if key == "" {
			key = batchKey(d)
		}
		if batchKey(m) == key {
			mates = append(mates, m)
		}
	}
	slices.SortFunc(mates, func(a, b *v1alpha1.Droplet) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	return mates[:min(len(mates), maxBatch-1)]
}

// awaitingCreateIndex holds, by namespace and shared key, the Droplets
// that may go in a multi-create: batchMates reads these few rather than
// every Droplet of a large installation, on every create.
const awaitingCreateIndex = "droplet.provisioning.hobbyfarm.io/awaiting-create"

func awaitingCreate(d *v1alpha1.Droplet) ([]string, error) {
	if !sharesKey(d) || !freshForCreate(d) {
		return nil, nil
	}
	return []string{awaitingCreateKey(d)}, nil
}

func awaitingCreateKey(d *v1alpha1.Droplet) string {
	return d.Namespace + "/" + d.Spec.KeyRefs[0]
}

// freshForCreate: a Droplet DigitalOcean has nothing of: never sent, or
// every create sent refused (a sold-out region's refusal among them, whose
// Droplets go to the next region together).
func freshForCreate(d *v1alpha1.Droplet) bool {
	nothingMade := v1alpha1.NeverSent(d) || d.Status.NotCreated && d.Status.DropletID == 0 && d.Spec.AdoptedDropletID == 0
	return d.DeletionTimestamp == nil && d.Spec.Name != "" && nothingMade && vmUID(d) != ""
}

// createBatch makes d and its mates with one multi-create request. Each
// member's intent, with the batch's tag, is recorded before the request is
// sent; a member whose write conflicts (another worker claimed it, or the
// cache was stale) is left out and goes its own way. d is updated in place
// and told when to look again; the mates' statuses are written here.
func (h *handler) createBatch(ctx context.Context, client *godo.Client, d *v1alpha1.Droplet, mates []*v1alpha1.Droplet, keyIDs []godo.DropletCreateSSHKey, where placement) (time.Duration, error) {
	batch := digitalocean.BatchTag(newBatchID())
	if !h.notes.claim(d, batch) {
		return 0, nil
	}
	defer h.notes.release(d)
	// Claim all first, then write: the writes take a while, and other
	// workers looking for mates meanwhile should leave these alone.
	var claimed []*v1alpha1.Droplet
	for _, m := range mates {
		if h.notes.claim(m, batch) {
			defer h.notes.release(m)
			claimed = append(claimed, m)
		}
	}
	// Every intent goes at once, d's too: round trips in a row would hold
	// every member back by their sum. Should d's fail, the others still go.
	candidates := append([]*v1alpha1.Droplet{d}, claimed...)
	boot := h.buckets.take(len(candidates))
	written := make([]*v1alpha1.Droplet, len(candidates))
	var intentErr error
	h.eachConcurrently(len(candidates), func(i int) {
		m := candidates[i]
		if m != d {
			m = m.DeepCopy()
		}
		err := h.recordIntent(m, batch, boot)
		switch {
		case err == nil:
			written[i] = m
		case m == d:
			intentErr = err
		}
	})
	members := slices.DeleteFunc(written, func(m *v1alpha1.Droplet) bool { return m == nil })
	if len(members) == 0 {
		return 0, intentErr
	}
	created, err := digitalocean.DropletsOf(client).CreateMultiple(ctx, multiCreateRequest(d, keyIDs, where, members, batch, nonEmpty(boot)...), createPriority(d))
	if err != nil {
		after := time.Duration(0)
		for _, m := range members {
			after = h.failCreate(client, m, err, true, where.region) // members are fresh: DigitalOcean has nothing of theirs
		}
		h.writeMates(d, members, after)
		return after, intentErr
	}
	byName := map[string]*godo.Droplet{}
	for i := range created {
		byName[created[i].Name] = &created[i]
	}
	after := h.opts.BootResync
	var answered []*v1alpha1.Droplet
	for _, m := range members {
		got := byName[m.Spec.Name]
		if got == nil {
			// Not in the answer: the next pass finds it by the batch tag.
			if m == d {
				after = digitalocean.CreateSettle
			} else {
				h.droplets.EnqueueAfter(m.Namespace, m.Name, digitalocean.CreateSettle)
			}
			continue
		}
		h.markCreated(m, got, where.region, fmt.Sprintf("droplet %d created in %s with %d others in one request%s", got.ID, where.region, len(members)-1, where.note()))
		answered = append(answered, m)
	}
	h.writeMates(d, answered, h.opts.BootResync)
	logFor(members[0]).WithField("batch", batch).Infof("created %d droplets in one request", len(created))
	return after, intentErr
}

// writeMates writes the statuses of the members other than d (whose
// status its own pass writes), all at once, and looks at each again after.
func (h *handler) writeMates(d *v1alpha1.Droplet, members []*v1alpha1.Droplet, after time.Duration) {
	var mates []*v1alpha1.Droplet
	for _, m := range members {
		if m != d {
			mates = append(mates, m)
		}
	}
	h.eachConcurrently(len(mates), func(i int) {
		h.writeMate(mates[i])
		h.droplets.EnqueueAfter(mates[i].Namespace, mates[i].Name, after)
	})
}

// eachConcurrently runs f(0) … f(n-1) at once and waits for all.
func (h *handler) eachConcurrently(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(i)
		}()
	}
	wg.Wait()
}

// writeMate writes a batch member's status; should that fail, its intent
// and batch tag are on record, and its next pass adopts by the tag.
func (h *handler) writeMate(m *v1alpha1.Droplet) {
	statecolumn.StampDroplet(m)
	held := h.pass.Held.Take(m)
	written, err := h.droplets.UpdateStatus(m)
	if err != nil {
		logFor(m).WithError(err).Info("status of a batch-created droplet not written; it will be adopted by its batch tag")
		h.droplets.Enqueue(m.Namespace, m.Name)
		return
	}
	h.notes.noteRecorded(written)
	held.Flush()
}

// findInBatch is the droplet named like d among those of its batch, at
// priority p (a create's or a delete's).
func findInBatch(ctx context.Context, client *godo.Client, d *v1alpha1.Droplet, p digitalocean.Priority) (*godo.Droplet, error) {
	all, err := digitalocean.DropletsOf(client).ListByTag(ctx, d.Status.CreateBatch, p)
	if err != nil {
		return nil, err
	}
	for i := range all {
		if all[i].Name == d.Spec.Name {
			return &all[i], nil
		}
	}
	return nil, nil
}

func newBatchID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
