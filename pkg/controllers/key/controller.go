// Package key registers SSH public keys with DigitalOcean for Key objects.
package key

import (
	"context"
	"fmt"
	"sync"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/deletepause"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/finalizer"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/owner"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/pass"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/related"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
	hfcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io/v1"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshkey"
	corecontrollers "github.com/rancher/wrangler/v3/pkg/generated/controllers/core/v1"
	"github.com/rancher/wrangler/v3/pkg/relatedresource"
	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

// HandlerName is part of the API, as its cleanup handler's name
// (finalizer.KeyCleanupHandler) is. Never rename it.
const HandlerName = "hf-provisioner-digitalocean-key"

type handler struct {
	ctx      context.Context
	clients  *digitalocean.Clients
	keys     provcontrollers.KeyController
	droplets provcontrollers.DropletCache
	secrets  corecontrollers.SecretCache
	vms      hfcontrollers.VirtualMachineCache
	recorder record.EventRecorder
	// sent holds the UIDs of Keys this process sent a create for: a status
	// write lost after it leaves the Key looking never synced.
	sent sync.Map
	// pass holds each pass's Events until its status write, and spaces
	// out each Key's retries after transient failures.
	pass *pass.Kit[*v1alpha1.Key]
	// pause and pauseDelay order a deleted VM's key delete after the
	// droplets' (see afterdroplets.go).
	pause      *deletepause.Pause
	pauseDelay time.Duration
}

// Options tune the Key controller.
type Options struct {
	// DeletePause tells when Droplet deletes paused; a deleted VM's key is
	// deleted in DigitalOcean once they have paused for PauseDelay.
	DeletePause *deletepause.Pause
	PauseDelay  time.Duration
}

// Register wires the Key handlers.
func Register(ctx context.Context, opts Options, c *controllers.Set) {
	keys, droplets, secrets := c.Keys, c.Droplets, c.Secrets
	h := &handler{ctx: ctx, clients: c.DigitalOcean, keys: keys, droplets: droplets.Cache(), secrets: secrets.Cache(), vms: c.VMs.Cache(),
		recorder: c.Recorder, pause: opts.DeletePause, pauseDelay: opts.PauseDelay}
	h.withPass(c.Recorder)
	// The remove handler first, so that sync gets the Key its finalizer
	// write returned and registers the key in the same pass.
	// The original alpha provisioner's Keys are the takeover's to clean up
	// (see package takeover).
	finalizer.RegisterCleanup(ctx, keys, finalizer.KeyCleanupHandler, h.cleanup, alpha.IsKey)
	keys.OnChange(ctx, HandlerName, h.sync)

	// A Droplet's own Key is retired once its droplet exists, and
	// registered again should it have to be made again; a deleting Key
	// deletes its key once its Droplet is gone.
	related.OnChange(droplets.Informer(), func(obj any) any {
		d, ok := obj.(*v1alpha1.Droplet)
		return ok && served(d)
	}, keys.Enqueue)

	keyCache := keys.Cache()
	// Both the key-pair Secret and the token Secret feed a Key.
	relatedresource.Watch(ctx, "key-from-secret", func(namespace, name string, _ runtime.Object) ([]relatedresource.Key, error) {
		all, err := keyCache.List(namespace, labels.Everything())
		if err != nil {
			return nil, err
		}
		var out []relatedresource.Key
		for _, k := range all {
			if k.Spec.TokenSecretRef.Name == name || k.Spec.PublicKeySecretRef.Name == name {
				out = append(out, relatedresource.NewKey(k.Namespace, k.Name))
			}
		}
		return out, nil
	}, keys, secrets)
}

func (h *handler) sync(_ string, k *v1alpha1.Key) (*v1alpha1.Key, error) {
	if k == nil || k.DeletionTimestamp != nil || alpha.IsKey(k) {
		return k, nil
	}
	d := h.ownDroplet(k)
	switch {
	case k.Status.KeyID != 0 && served(d) && d.DeletionTimestamp == nil && !h.vmDeleting(k):
		orig := k
		k = k.DeepCopy()
		return h.pass.Finish(orig, k, h.retire(k, d.Status.DropletID))
	case k.Status.KeyID != 0, k.IsRetired() && !awaitsCreate(d):
		return k, nil
	case k.Spec.AdoptedKeyID != 0:
		// Made by the original provisioner: never registered again.
		if v1alpha1.Created.IsTrue(k) {
			return k, nil
		}
		orig := k
		k = k.DeepCopy()
		h.adopt(k)
		return h.pass.Finish(orig, k, 0)
	}
	if !finalizer.Has(k, finalizer.KeyCleanupHandler) {
		// Made without it (the VM controller makes it with the finalizer on),
		// and wrangler's remove handler, which runs first, could not add the
		// finalizer (its write conflicted): a key registered before it is
		// there leaks if the Key is deleted meanwhile. The next pass retries.
		return k, nil
	}
	orig := k
	k = k.DeepCopy()
	retry := h.register(k)
	return h.pass.Finish(orig, k, retry)
}

// register creates the key in DigitalOcean, or adopts it (by fingerprint) if DigitalOcean has it already.
func (h *handler) register(k *v1alpha1.Key) time.Duration {
	// Whatever fails before the create is sent leaves k.Status.NotCreated
	// as it was: true once DigitalOcean is known to hold nothing of k's.
	_, sentHere := h.sent.Load(k.UID)
	k.Status.NotCreated = k.Status.NotCreated || (neverSynced(k) && !sentHere)
	publicKey, fingerprint, err := h.publicKey(k)
	if err != nil {
		h.pass.Transition(k, v1alpha1.Created, false, "KeyPairUnavailable", err.Error())
		return 0
	}
	client, err := h.clients.ForSecret(h.secrets, k.Namespace, k.Spec.TokenSecretRef)
	if err != nil {
		h.pass.Transition(k, v1alpha1.Created, false, "TokenUnavailable", err.Error())
		return 0
	}
	ctx, cancel := digitalocean.CallContext(h.ctx)
	defer cancel()

	// Created first, looked up only when DigitalOcean says it has the key
	// already (422, in use): a key pair is new, so only an earlier create
	// of this Key (its answer or status write lost) or a restore can have
	// put it there, and a lookup first would cost every VM one request.
	h.sent.Store(k.UID, true)
	reason := "Created"
	keys := digitalocean.KeysOf(client)
	existing, err := keys.Create(ctx, k.Spec.Name, publicKey)
	inUse := digitalocean.IsKeyInUse(err)
	// A refused create added nothing; any other failure may have.
	k.Status.NotCreated = k.Status.NotCreated && !inUse && digitalocean.IsRefusal(err)
	if inUse {
		reason = "Adopted"
		existing, err = keys.GetByFingerprint(ctx, fingerprint)
	}
	if err != nil {
		return h.pass.FailDO(k, v1alpha1.Created, err)
	}
	// Backoff counts failed calls in a row, not failed passes.
	h.pass.Succeeded(k)
	k.Status.NotCreated = false
	k.Status.KeyID = existing.ID
	k.Status.Fingerprint = existing.Fingerprint
	h.pass.Transition(k, v1alpha1.Created, true, reason, fmt.Sprintf("SSH key %d (%s) registered", existing.ID, existing.Fingerprint))
	// Ready follows from Created here: one step, one Event.
	events.SetCondition(k, v1alpha1.Ready, true, reason, "SSH key is registered in DigitalOcean")
	return 0
}

func (h *handler) publicKey(k *v1alpha1.Key) (string, string, error) {
	ref := k.Spec.PublicKeySecretRef
	secret, err := h.secrets.Get(k.Namespace, ref.Name)
	if err != nil {
		return "", "", fmt.Errorf("key-pair Secret %q: %w", ref.Name, err)
	}
	publicKey := string(secret.Data[ref.Key])
	fingerprint, err := sshkey.Fingerprint(publicKey)
	if err != nil {
		return "", "", fmt.Errorf("Secret %q key %q is not an authorized_keys line: %w", ref.Name, ref.Key, err)
	}
	return publicKey, fingerprint, nil
}

// cleanup deletes the key in DigitalOcean, after the droplets (see
// afterdroplets.go); a 404 means it is already gone.
func (h *handler) cleanup(_ string, k *v1alpha1.Key) (*v1alpha1.Key, error) {
	if vm := h.vmOf(k); vm != nil && vm.DeletionTimestamp == nil {
		// Deleted by hand while its VM lives: the new Key adopts it by fingerprint.
		return k, nil
	}
	if v1alpha1.ForceReleaseRequested(k) {
		h.forceRelease(k)
		return k, nil
	}
	if k.IsRetired() {
		h.pass.Forget(k)
		return k, nil // deleted in DigitalOcean already, and logged then
	}
	if k.Status.NotCreated && k.Status.KeyID == 0 {
		logrus.WithField("vm", vmName(k)).Info("DigitalOcean holds nothing of this SSH key (every create was refused or none was sent); releasing the Key")
		h.pass.Forget(k)
		return k, nil
	}
	orig := k
	k = k.DeepCopy()
	if wait := h.waitForDroplets(k); wait > 0 {
		logrus.WithField("vm", vmName(k)).WithField("key", k.Status.KeyID).Debugf("SSH key deleted in DigitalOcean once droplet deletes pause; looking again in %v", wait)
		return finalizer.Keep(h.pass.Finish(orig, k, wait))
	}
	client, err := h.clients.ForSecret(h.secrets, k.Namespace, k.Spec.TokenSecretRef)
	if err != nil {
		if k.Status.KeyID == 0 && k.Status.Conditions == nil {
			// Never synced, and without a token nothing could have been registered.
			return k, nil
		}
		h.pass.Transition(k, v1alpha1.Deleting, false, "TokenUnavailable", "cannot delete the SSH key: "+err.Error())
		return finalizer.Keep(h.pass.Finish(orig, k, time.Minute))
	}
	if wait := h.clients.Room(client, digitalocean.PriorityTidy); wait > 0 {
		return finalizer.Keep(h.pass.Finish(orig, k, wait))
	}
	// Even a Key without status may have been registered: the create can
	// succeed and the status write after it fail (the Key being deleted at
	// that moment is enough). Deleting by fingerprint costs one call.
	ctx, cancel := digitalocean.CallContext(h.ctx)
	defer cancel()
	keys := digitalocean.KeysOf(client)
	if k.Status.KeyID != 0 {
		err = keys.Delete(ctx, k.Status.KeyID, digitalocean.PriorityTidy)
	} else if k.Spec.AdoptedKeyID != 0 {
		// Taken over but not yet recorded: the alpha's key, by its ID.
		err = keys.Delete(ctx, k.Spec.AdoptedKeyID, digitalocean.PriorityTidy)
	} else if _, fingerprint, ferr := h.publicKey(k); ferr == nil {
		err = keys.DeleteByFingerprint(ctx, fingerprint, digitalocean.PriorityTidy)
	}
	if err != nil {
		return finalizer.Keep(h.pass.Finish(orig, k, h.pass.FailDO(k, v1alpha1.Deleting, err)))
	}
	h.pass.Forget(k)
	logrus.WithField("vm", vmName(k)).WithField("key", k.Status.KeyID).Info("SSH key deleted in DigitalOcean")
	return k, nil
}

// neverSynced: no pass of this controller has recorded anything on k.
func neverSynced(k *v1alpha1.Key) bool { return k.Status.KeyID == 0 && k.Status.Conditions == nil }

func (h *handler) vmOf(k *v1alpha1.Key) *hfv1.VirtualMachine { return owner.VM(h.vms, k, vmName(k)) }

// vmName: a Key carries its VM's name.
func vmName(k *v1alpha1.Key) string { return k.Name }
