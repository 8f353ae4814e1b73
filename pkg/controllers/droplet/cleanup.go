package droplet

import (
	"context"
	"fmt"
	"time"

	"github.com/digitalocean/godo"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	"github.com/rancher/wrangler/v3/pkg/generic"
	"github.com/sirupsen/logrus"
)

// deletePoll is how soon a deletion is checked again.
const deletePoll = 2 * time.Second

// cleanup deletes the droplet in DigitalOcean and lets the Droplet go only
// once DigitalOcean confirms it is gone.
func (h *handler) cleanup(_ string, d *v1alpha1.Droplet) (*v1alpha1.Droplet, error) {
	log := logrus.WithField("vm", d.Spec.VirtualMachine)
	if vm := h.vmOf(d); vm != nil && vm.DeletionTimestamp == nil {
		// Deleted by hand while its VM lives: the VM handler makes a new
		// Droplet, which adopts the same droplet by its tag or, made by a
		// multi-create and so without one, by the ID kept on the VM.
		if err := h.rememberDroplet(vm, d.Status.DropletID); err != nil {
			return d, err
		}
		log.Info("Droplet object deleted while its VM exists; keeping the droplet for re-adoption")
		return d, nil
	}
	uid := vmUID(d)
	_, createdHere := h.created.Load(uid)
	if d.Spec.Name == "" || (!createdHere && !v1alpha1.MayExistInDigitalOcean(d)) {
		// A placeholder, or never got as far as a create: recordIntent writes
		// the Created condition before any create is sent. (Any other
		// condition, e.g. Configured, says nothing about DigitalOcean.)
		h.backoff.Reset(objectKey(d))
		return d, nil
	}
	if v1alpha1.ForceReleaseRequested(d) {
		h.forceRelease(d)
		return d, nil
	}

	orig := d
	d = d.DeepCopy()
	client, err := h.client(d)
	if err != nil {
		h.fail(d, v1alpha1.Deleting, "TokenUnavailable", "cannot delete the droplet: "+err.Error())
		return h.wait(orig, d, time.Minute)
	}
	ctx, cancel := digitalocean.CallContext(h.ctx, digitalocean.PriorityDelete)
	defer cancel()

	// Delete every droplet that carries the VM's UID tag, not only the one in
	// the status: a create may have reached DigitalOcean without its answer
	// reaching us (no ID in the status), and should a second droplet ever
	// exist for the VM, it must not outlive the VM either.
	var ids []int
	seen := map[int]bool{0: true}
	add := func(id int) {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	add(d.Status.DropletID)
	if id, ok := h.created.Load(uid); ok {
		add(id.(int))
	}
	add(knownDropletID(h.vmOf(d)))
	if d.Status.CreateBatch != "" {
		found, err := findInBatch(ctx, client, d)
		if err != nil {
			return h.wait(orig, d, h.failDO(d, v1alpha1.Deleting, err))
		}
		if found != nil {
			add(found.ID)
		}
	}
	if uid != "" {
		found, err := digitalocean.ListByTag(ctx, client, digitalocean.VMTag(uid))
		if err != nil {
			return h.wait(orig, d, h.failDO(d, v1alpha1.Deleting, err))
		}
		for _, f := range found {
			add(f.ID)
		}
		h.backoff.Reset(objectKey(d)) // it answered; see create
	}

	remaining := 0
	for _, id := range ids {
		gone, err := deleteDroplet(ctx, client, id)
		if err != nil {
			return h.wait(orig, d, h.failDO(d, v1alpha1.Deleting, err))
		}
		h.backoff.Reset(objectKey(d))
		if !gone {
			remaining++
		}
	}
	if remaining > 0 {
		h.transition(d, v1alpha1.Deleting, true, "Deleting", fmt.Sprintf("waiting for DigitalOcean to delete %d droplet(s)", remaining))
		return h.wait(orig, d, deletePoll)
	}
	h.created.Delete(uid)
	h.refused.Delete(objectKey(d))
	h.backoff.Reset(objectKey(d))
	if d.DeletionTimestamp != nil {
		metrics.DeletionSeconds.Observe(time.Since(d.DeletionTimestamp.Time).Seconds())
	}
	log.WithField("droplet", d.Status.DropletID).Info("droplet deleted in DigitalOcean")
	return d, nil
}

// deleteDroplet deletes id and reports whether DigitalOcean confirms it gone.
func deleteDroplet(ctx context.Context, client *godo.Client, id int) (bool, error) {
	if _, err := client.Droplets.Delete(ctx, id); err != nil && !digitalocean.IsNotFound(err) {
		return false, err
	}
	if _, _, err := client.Droplets.Get(ctx, id); digitalocean.IsNotFound(err) {
		return true, nil
	} else if err != nil {
		return false, err
	}
	return false, nil
}

// wait keeps the finalizer, records the status and looks again later.
func (h *handler) wait(orig, d *v1alpha1.Droplet, after time.Duration) (*v1alpha1.Droplet, error) {
	d, err := h.finish(orig, d, nil, after)
	if err != nil {
		return d, err
	}
	return d, generic.ErrSkip
}
