package droplet

import (
	"sync"
	"sync/atomic"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"k8s.io/client-go/tools/cache"
)

// processNotes are what the Droplet handler knows of its Droplets beyond
// their objects, in this process only (a restart loses them; each use
// tolerates that): what the cache and DigitalOcean's lists may
// not show yet. Its zero value is ready to use, and it is safe for the
// handler's workers at once.
//
// discard clears a going Droplet's entries, except two:
//   - a multi-create's claim, which its sender releases once the answer is
//     in (the cleanup waits for that);
//   - the droplets DigitalOcean confirmed deleted (gone), kept for
//     goneMemory whatever becomes of their Droplet or VM: the reaper, the
//     batcher and every cleanup (the VM's Droplet's, a pool member's) read
//     it, so that each droplet gets one delete.
//
// A new kind of entry gets its named operations here, and a line in forget
// unless it must outlive the Droplet like the two above.
type processNotes struct {
	// created: droplet IDs of creates this process sent, by VM UID. The
	// cache may still show a Droplet without its ID after the status write,
	// and DigitalOcean's tag listing can lag behind a create: either alone
	// could lead to a second droplet.
	created sync.Map
	// claims: the batch tag of the multi-create of this process sending a
	// Droplet, by object key, so that other workers leave it to it.
	claims sync.Map
	// readySince: when a Droplet waiting for batch mates was first ready to
	// create, by object key.
	readySince sync.Map
	// refused: the creates DigitalOcean refused, by object key.
	refused sync.Map
	// recorded: Droplet UIDs whose droplet ID this process wrote, so that a
	// cached copy from before that write is not taken for a Droplet that
	// still needs its droplet.
	recorded sync.Map
	// gone: when DigitalOcean confirmed each droplet deleted (a 204, or a
	// 404: gone already), by droplet ID.
	gone sync.Map
	// gonePruned is when gone last dropped its old entries (time.Time).
	gonePruned atomic.Value
}

// refusal is when DigitalOcean refused a create of which spec generation.
type refusal struct {
	generation int64
	at         time.Time
}

// createdID is the droplet this process created for d's VM.
func (m *processNotes) createdID(d *v1alpha1.Droplet) (int, bool) {
	id, ok := m.created.Load(vmUID(d))
	if !ok {
		return 0, false
	}
	return id.(int), true
}

// noteCreated remembers DigitalOcean's answer to d's create; d no longer
// gathers mates, and an earlier refusal no longer holds it back.
func (m *processNotes) noteCreated(d *v1alpha1.Droplet, id int) {
	m.created.Store(vmUID(d), id)
	m.readySince.Delete(cache.MetaObjectToName(d).String())
	m.refused.Delete(cache.MetaObjectToName(d).String())
}

// claim marks d as sent by the multi-create batch; false if another one
// has it already.
func (m *processNotes) claim(d *v1alpha1.Droplet, batch string) bool {
	_, taken := m.claims.LoadOrStore(cache.MetaObjectToName(d).String(), batch)
	return !taken
}

// release ends d's claim once its multi-create has answered.
func (m *processNotes) release(d *v1alpha1.Droplet) {
	m.claims.Delete(cache.MetaObjectToName(d).String())
}

// inBatch: a multi-create of this process is sending d.
func (m *processNotes) inBatch(d *v1alpha1.Droplet) bool {
	_, busy := m.claims.Load(cache.MetaObjectToName(d).String())
	return busy
}

// firstReady is when d was first ready to create, now on the first ask.
func (m *processNotes) firstReady(d *v1alpha1.Droplet) time.Time {
	first, _ := m.readySince.LoadOrStore(cache.MetaObjectToName(d).String(), time.Now())
	return first.(time.Time)
}

// noteRefused remembers that DigitalOcean refused d's create now.
func (m *processNotes) noteRefused(d *v1alpha1.Droplet) {
	m.refused.Store(cache.MetaObjectToName(d).String(), refusal{generation: d.Generation, at: time.Now()})
}

// refusedAt is when DigitalOcean refused a create of d's current spec.
func (m *processNotes) refusedAt(d *v1alpha1.Droplet) (time.Time, bool) {
	v, ok := m.refused.Load(cache.MetaObjectToName(d).String())
	if !ok || v.(refusal).generation != d.Generation {
		return time.Time{}, false
	}
	return v.(refusal).at, true
}

// noteRecorded remembers that d's droplet ID is written.
func (m *processNotes) noteRecorded(d *v1alpha1.Droplet) {
	if d.Status.DropletID != 0 {
		m.recorded.Store(d.UID, true)
	}
}

// isRecorded: this process wrote d's droplet ID already.
func (m *processNotes) isRecorded(d *v1alpha1.Droplet) bool {
	_, ok := m.recorded.Load(d.UID)
	return ok
}

// goneMemory is how long a confirmed delete is remembered: far longer
// than the reaper, a batch and the cleanups of one VM take between them,
// short enough that a year of droplets never piles up.
const goneMemory = time.Hour

// noteGone remembers that DigitalOcean confirmed droplets ids deleted.
func (m *processNotes) noteGone(ids ...int) {
	now := time.Now()
	for _, id := range ids {
		m.gone.Store(id, now)
	}
	if last, ok := m.gonePruned.Load().(time.Time); ok && now.Sub(last) < goneMemory/4 {
		return
	}
	m.gonePruned.Store(now)
	m.gone.Range(func(id, at any) bool {
		if now.Sub(at.(time.Time)) > goneMemory {
			m.gone.Delete(id)
		}
		return true
	})
}

// isGone: DigitalOcean confirmed droplet id deleted; nothing may send its
// delete again.
func (m *processNotes) isGone(id int) bool {
	_, ok := m.gone.Load(id)
	return ok
}

// discard clears what is remembered of d, which is going (see processNotes
// for the two entries it keeps).
func (m *processNotes) discard(d *v1alpha1.Droplet) {
	m.created.Delete(vmUID(d))
	m.recorded.Delete(d.UID)
	m.refused.Delete(cache.MetaObjectToName(d).String())
	m.readySince.Delete(cache.MetaObjectToName(d).String())
}
