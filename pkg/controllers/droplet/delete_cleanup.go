package droplet

import (
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/finalizer"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	"github.com/rancher/wrangler/v3/pkg/generic"
)

// cleanup deletes the droplet in DigitalOcean and lets the Droplet go once
// DigitalOcean has accepted every delete.
func (h *handler) cleanup(_ string, d *v1alpha1.Droplet) (*v1alpha1.Droplet, error) {
	log := logFor(d)
	if d.Spec.ClaimedDropletID != 0 && d.Status.DropletID == 0 {
		// Taken from a pool but never recorded: the pool member still owns
		// the droplet, and its cleanup deletes it unless a VM recorded it.
		log.WithField("droplet", d.Spec.ClaimedDropletID).Info("releasing a claim never recorded; the pool member owns the droplet")
		h.pass.Forget(d)
		return d, nil
	}
	if d.IsPoolMember() && d.Status.Claim != nil && !v1alpha1.ForceReleaseRequested(d) {
		verdict, err := h.claimedMember(d)
		switch {
		case err != nil:
			return d, err
		case verdict == handedOver:
			h.releaseHandedOver(d)
			return d, nil
		case verdict == awaitHandover:
			h.droplets.EnqueueAfter(d.Namespace, d.Name, handoverPoll)
			return d, generic.ErrSkip
		}
		log.WithField("droplet", d.Status.DropletID).WithField("claimed_by", d.Status.Claim.VirtualMachine).
			Info("the VM that took this pool droplet is gone without recording it; deleting it")
	}
	if vm := h.vmOf(d); vm != nil && vm.DeletionTimestamp == nil {
		// Deleted by hand while its VM lives: the VM handler makes a new
		// Droplet, which adopts the same droplet by the ID kept on the VM.
		if err := h.rememberDroplet(vm, d.Status.DropletID); err != nil {
			return d, err
		}
		log.Info("Droplet object deleted while its VM exists; keeping the droplet for re-adoption")
		return d, nil
	}
	if h.notes.inBatch(d) {
		// Its create is on the wire; what it made is known once it answers.
		h.droplets.EnqueueAfter(d.Namespace, d.Name, batchPoll)
		return d, generic.ErrSkip
	}
	if h.deletes.isPending(d) {
		// Its droplets are in a batched delete, which records them as
		// reaped once DigitalOcean accepted it, or hands them back.
		h.droplets.EnqueueAfter(d.Namespace, d.Name, deletePendingPoll)
		return d, generic.ErrSkip
	}
	_, createdHere := h.notes.createdID(d)
	if d.Spec.Name == "" || (!createdHere && !v1alpha1.MayExistInDigitalOcean(d)) {
		// A placeholder, or never got as far as a create: recordIntent writes
		// the Created condition before any create is sent. (Any other
		// condition, e.g. Configured, says nothing about DigitalOcean.)
		h.pass.Forget(d)
		return d, nil
	}
	if !createdHere && refusedOnly(d, h.vmOf(d)) {
		log.Info("DigitalOcean refused every create of this droplet, so it holds nothing to delete; releasing the Droplet")
		h.pass.Forget(d)
		return d, nil
	}
	if v1alpha1.ForceReleaseRequested(d) {
		h.forceRelease(d)
		return d, nil
	}

	orig := d
	d = d.DeepCopy()
	client, err := h.clients.ForSecret(h.secrets, d.Namespace, d.Spec.TokenSecretRef)
	if err != nil {
		h.pass.Fail(d, v1alpha1.Deleting, "TokenUnavailable", "cannot delete the droplet: "+err.Error())
		return finalizer.Keep(h.pass.Finish(orig, d, time.Minute))
	}
	ctx, cancel := digitalocean.CallContext(h.ctx)
	defer cancel()

	targets := h.targetsOf(d)
	if d.Status.CreateBatch != "" && len(targets.ids) == 0 {
		// A multi-create whose answer never came: its droplet is known only by
		// its name among the batch's.
		found, err := findInBatch(ctx, client, d, digitalocean.PriorityDelete)
		if err != nil {
			return finalizer.Keep(h.pass.Finish(orig, d, h.pass.FailDO(d, v1alpha1.Deleting, err)))
		}
		if found != nil {
			targets.add(found.ID)
		}
	}
	if err := h.deleteEach(ctx, client, targets); err != nil {
		return finalizer.Keep(h.pass.Finish(orig, d, h.pass.FailDO(d, v1alpha1.Deleting, err)))
	}
	h.pass.Forget(d)
	if d.DeletionTimestamp != nil {
		metrics.DeletionSeconds.Observe(time.Since(d.DeletionTimestamp.Time).Seconds())
	}
	log.WithField("droplet", d.Status.DropletID).Info("droplet deleted in DigitalOcean")
	return d, nil
}

// refusedOnly: DigitalOcean answered every create sent for d with a refusal
// (status.notCreated), and nothing else is on record that a delete would
// target (a droplet ID, one an earlier Droplet of the VM had).
func refusedOnly(d *v1alpha1.Droplet, vm *hfv1.VirtualMachine) bool {
	return d.Status.NotCreated && d.Status.DropletID == 0 && knownDropletID(vm) == 0
}
