package key

import (
	"fmt"
	"slices"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
	"github.com/sirupsen/logrus"
)

// A droplet's own Key (a VM's, or a pool member's made without the shared
// key) is needed in DigitalOcean only until that droplet exists:
// DigitalOcean reads a droplet's keys once, when it creates it, and the key
// pair stays in the Secret. So once the droplet exists the key is deleted
// there ("retired"), at the lowest priority, long before the VM is deleted:
// DigitalOcean has no batch delete for keys, and one DELETE per VM at an
// event's end would make every VM's release wait behind the others'. Should
// the droplet have to be made again, sync registers the key again from the
// same Secret. A shared key serves creates to come and is never retired.
//
// A retirement also waits, with no cap, until this installation's Droplet
// deletes have paused (deletepause): when an event ends, its VMs' droplets
// are deleted first, and a key left registered meanwhile costs nothing.

// ownDroplet is the Droplet made with k alone (it has k's name), or nil.
func (h *handler) ownDroplet(k *v1alpha1.Key) *v1alpha1.Droplet {
	d, err := h.droplets.Get(k.Namespace, k.Name)
	if err != nil || !slices.Equal(d.Spec.KeyRefs, []string{k.Name}) {
		return nil
	}
	return d
}

// served: DigitalOcean created d's droplet, so d needs its key no more.
func served(d *v1alpha1.Droplet) bool {
	return d != nil && d.Status.DropletID != 0 && v1alpha1.Created.IsTrue(d)
}

// awaitsCreate: d is to be created (again) and needs its key for that. A
// Droplet being deleted needs none: its cleanup deletes what there is.
func awaitsCreate(d *v1alpha1.Droplet) bool {
	return d != nil && d.DeletionTimestamp == nil && !served(d)
}

// retire deletes k's key in DigitalOcean now that droplet exists, and says
// when to try again when it could not.
func (h *handler) retire(k *v1alpha1.Key, droplet int) time.Duration {
	if wait := h.pause.Until(time.Now(), h.pauseDelay); wait > 0 {
		return wait
	}
	client, err := h.clients.ForSecret(h.secrets, k.Namespace, k.Spec.TokenSecretRef)
	if err != nil {
		return time.Minute // the key waits; nothing is lost meanwhile
	}
	if wait := h.clients.Room(client, digitalocean.PriorityTidy); wait > 0 {
		return wait
	}
	ctx, cancel := digitalocean.CallContext(h.ctx)
	defer cancel()
	if err := digitalocean.KeysOf(client).Delete(ctx, k.Status.KeyID, digitalocean.PriorityTidy); err != nil {
		f := digitalocean.Classify(err)
		logrus.WithField("vm", vmName(k)).WithField("reason", f.Reason).Info("retiring the SSH key failed; trying again later: " + f.Message)
		return h.pass.Retry(k, f)
	}
	h.pass.Succeeded(k)
	// The same line as a deletion at the VM's end: it is the key's one delete.
	logrus.WithField("vm", vmName(k)).WithField("key", k.Status.KeyID).WithField("droplet", droplet).
		WithField("why", "its droplet exists; the key pair stays in its Secret").Info("SSH key deleted in DigitalOcean")
	message := fmt.Sprintf("SSH key %d (%s) deleted in DigitalOcean once droplet %d existed; registered again from Secret %q if a droplet must be made again",
		k.Status.KeyID, k.Status.Fingerprint, droplet, k.Spec.PublicKeySecretRef.Name)
	k.Status.KeyID = 0
	k.Status.NotCreated = true
	// Not an Event: a routine step of every VM, which nobody acts on.
	events.SetCondition(k, v1alpha1.Created, true, v1alpha1.ReasonRetired, message)
	events.SetCondition(k, v1alpha1.Ready, true, v1alpha1.ReasonRetired, message)
	return 0
}
