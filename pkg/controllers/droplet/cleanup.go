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
		// Deleted by hand while its VM lives: the VM handler makes a new Droplet,
		// which adopts the same droplet by its tag.
		log.Info("Droplet object deleted while its VM exists; keeping the droplet for re-adoption")
		return d, nil
	}
	if d.Spec.Name == "" || (d.Status.DropletID == 0 && d.Status.Conditions == nil) {
		// Never configured, so never sent to DigitalOcean.
		return d, nil
	}

	orig := d
	d = d.DeepCopy()
	client, err := h.client(d)
	if err != nil {
		h.fail(d, v1alpha1.Deleting, "TokenUnavailable", "cannot delete the droplet: "+err.Error())
		return h.wait(orig, d, time.Minute)
	}
	ctx, cancel := context.WithTimeout(h.ctx, digitalocean.CallTimeout)
	defer cancel()

	ids := []int{d.Status.DropletID}
	if d.Status.DropletID == 0 {
		// A create may have reached DigitalOcean without its answer reaching us.
		found, err := listByTag(ctx, client, digitalocean.VMTag(vmUID(d)))
		if err != nil {
			return h.wait(orig, d, h.failDO(d, v1alpha1.Deleting, err))
		}
		ids = ids[:0]
		if id, ok := h.created.Load(vmUID(d)); ok {
			ids = append(ids, id.(int))
		}
		for _, f := range found {
			if len(ids) == 0 || f.ID != ids[0] {
				ids = append(ids, f.ID)
			}
		}
	}

	remaining := 0
	for _, id := range ids {
		gone, err := deleteDroplet(ctx, client, id)
		if err != nil {
			return h.wait(orig, d, h.failDO(d, v1alpha1.Deleting, err))
		}
		if !gone {
			remaining++
		}
	}
	if remaining > 0 {
		h.transition(d, v1alpha1.Deleting, true, "Deleting", fmt.Sprintf("waiting for DigitalOcean to delete %d droplet(s)", remaining))
		return h.wait(orig, d, deletePoll)
	}
	h.created.Delete(vmUID(d))
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
