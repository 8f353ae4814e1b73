package droplet

import (
	"slices"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
	"github.com/rancher/wrangler/v3/pkg/condition"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

var everything = labels.Everything()

// sync is a Droplet's pass: without a droplet ID it is created or adopted
// (create*.go, pool_claimed.go), with one it is re-read (observe*.go).
// Deletion is cleanup's (delete*.go).
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
	client, err := h.clients.ForSecret(h.secrets, d.Namespace, d.Spec.TokenSecretRef)
	if err != nil && d.Status.DropletID != 0 {
		// The droplet runs without the token; only its re-reads need it. Its
		// VM is not warned: its Environment is, and a deletion says so when
		// it needs the token.
		logFor(d).WithError(err).Debug("cannot re-read the droplet without its token")
		return h.pass.Finish(orig, d, h.opts.ActiveResync)
	}
	if err != nil {
		h.pass.Fail(d, v1alpha1.Created, "TokenUnavailable", err.Error())
		return h.pass.Finish(orig, d, 0)
	}
	if d.Status.DropletID == 0 && h.notes.isRecorded(d) {
		// This process wrote the droplet's ID already and the cache lags:
		// the watch brings that copy, and looking the droplet up again
		// now would cost a request and a conflicting write.
		return orig, nil
	}
	ctx, cancel := digitalocean.CallContext(h.ctx)
	defer cancel()
	var requeue time.Duration
	switch {
	case d.Status.DropletID != 0:
		requeue, err = h.refresh(ctx, client, d)
	case d.Spec.ClaimedDropletID != 0:
		// Taken from a warm pool: the user waits, as for a create.
		requeue, err = h.adoptClaimed(ctx, client, d)
	case d.Spec.AdoptedDropletID != 0:
		requeue, err = h.adoptAlpha(ctx, client, d)
	default:
		requeue, err = h.create(ctx, client, d)
	}
	if err != nil {
		// The error re-queues the Droplet, after the status write records
		// what the pass found.
		written, werr := h.pass.Finish(orig, d, 0)
		if werr != nil {
			return written, werr
		}
		return written, err
	}
	if firstLookChangedNothing(orig, d, requeue) || h.firstLoginUnderWay(orig, d) {
		// A write in a moment records this pass's findings too (see each):
		// writing now as well cost a write, and a pass of the VM, per VM of
		// a flood.
		h.droplets.EnqueueAfter(d.Namespace, d.Name, requeue)
		return orig, nil
	}
	return h.pass.Finish(orig, d, requeue)
}

// firstLookWriteWait is the longest wait for a create before which a new
// Droplet's first pass, having found nothing to record, leaves its state
// unwritten: a Droplet that waits longer shows it waits.
const firstLookWriteWait = time.Second

// firstLookChangedNothing: d, never written by this controller (no state),
// is unchanged by its pass, which looks again within firstLookWriteWait. It
// is about to be created, and its intent write (recordIntent) records its
// state and valid config.
func firstLookChangedNothing(orig, d *v1alpha1.Droplet, requeue time.Duration) bool {
	return orig.Status.State == "" && d.Status.DropletID == 0 && requeue > 0 && requeue <= firstLookWriteWait &&
		equality.Semantic.DeepEqual(orig.Status, d.Status)
}

// progress records a step on the way to a running VM: an Event on the
// Droplet only when its VM will not announce the step itself (it does for
// the first create and the first boot, see virtualmachine's announce). One
// Event per step instead of two is a write less per VM and step in a flood.
func (h *handler) progress(d *v1alpha1.Droplet, cond condition.Cond, reason, message string) {
	vm := h.vmOf(d)
	announced := vm != nil && vm.DeletionTimestamp == nil && !slices.Contains(vmStatusesAfter[cond], vm.Status.Status)
	if announced || d.IsPoolMember() {
		// A pool member's steps are nobody's news: its pool counts them.
		events.SetCondition(d, cond, true, reason, message)
		return
	}
	h.pass.Transition(d, cond, true, reason, message)
}

// vmStatusesAfter are the VM statuses from which the VM no longer announces
// the step cond stands for.
var vmStatusesAfter = map[condition.Cond][]hfv1.VmStatus{
	v1alpha1.Created:   {hfv1.VmStatusProvisioned, hfv1.VmStatusRunning},
	v1alpha1.Ready:     {hfv1.VmStatusRunning},
	v1alpha1.Reachable: {hfv1.VmStatusRunning},
}

// firstLoginWait bounds how long the write of a droplet's activity waits for
// its first login check: each pass meanwhile reads the droplet again, and a
// read may cost a list.
const firstLoginWait = time.Second

// firstLoginUnderWay: d's droplet turned active in this pass, and the first
// login check has run for less than firstLoginWait without a result. The
// pass its result brings (the prober re-queues the Droplet) finds the
// droplet active again and writes both at once. Only while no Event waits
// for the write: the next pass would record it again.
func (h *handler) firstLoginUnderWay(orig, d *v1alpha1.Droplet) bool {
	return !v1alpha1.Ready.IsTrue(orig) && v1alpha1.Ready.IsTrue(d) && v1alpha1.Reachable.GetStatus(d) == "" &&
		h.prober != nil && h.prober.inFlightFor(cache.MetaObjectToName(d).String(), firstLoginWait) && !h.pass.Held.Holds(d)
}
