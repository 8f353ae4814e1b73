package takeover

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/digitalocean/godo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshkey"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
)

// untakenRecheck is when an alpha Key whose VM is not taken over yet is
// looked at again (the takeover needs the VM's config and its caches).
const untakenRecheck = 30 * time.Second

// deleteDuplicates deletes, once per alpha Key, the DigitalOcean keys the
// alpha made for the same live VM besides the one it recorded: its Key
// handler, reading a lagging cache, sometimes registered a second key
// (from a rewritten key pair) that nothing records. A key is the VM's only
// if it has the alpha's name for the VM AND one of the key pairs this
// namespace holds for it (the alpha Secret's, the alpha Key's): a namesake
// VM of another namespace on the same token has other pairs. One of the
// name with a pair recorded nowhere is reported instead. A droplet reads
// its keys once, at its creation, so none of these is needed.
func (h *handler) deleteDuplicates(k *v1alpha1.Key) error {
	if _, done := h.duplicatesDone.Load(k.UID); done {
		return nil
	}
	vm, err := h.liveVM(k, k.Spec.Machine)
	if err != nil || vm == nil {
		return err
	}
	ours, err := h.droplets.Cache().Get(k.Namespace, k.Spec.Machine)
	if err != nil || ours.Spec.AdoptedDropletID == 0 {
		// Not taken over yet: the token is known once it is.
		h.keys.EnqueueAfter(k.Namespace, k.Name, untakenRecheck)
		return nil
	}
	token, err := digitalocean.ReadToken(h.secrets, k.Namespace, ours.Spec.TokenSecretRef)
	if err != nil {
		h.keys.EnqueueAfter(k.Namespace, k.Name, untakenRecheck)
		return nil
	}
	client, err := h.clients.For(token)
	if err != nil {
		return err
	}
	if wait := h.clients.Room(client, digitalocean.PriorityTidy); wait > 0 {
		// Other work needs the token's budget first; nothing is lost by waiting.
		h.keys.EnqueueAfter(k.Namespace, k.Name, wait)
		return nil
	}
	ctx, cancel := digitalocean.CallContext(h.ctx)
	defer cancel()
	all, err := h.lists.get(ctx, client, digitalocean.TokenHash(token))
	if digitalocean.IsHeldBack(err) {
		h.keys.EnqueueAfter(k.Namespace, k.Name, digitalocean.Classify(err).RetryAfter)
		return nil
	}
	if err != nil {
		return err
	}
	rec := alpha.KeyOf(k)
	name := cmp.Or(rec.Name, alpha.KeyName(k.Spec.Machine))
	pairs := h.alphaFingerprints(k, rec)
	log := logrus.WithField("vm", k.Spec.Machine)
	for _, key := range all {
		if key.Name != name || key.ID == rec.ID {
			continue
		}
		if !pairs[key.Fingerprint] {
			// Its pair is recorded nowhere here (the alpha rewrote it away),
			// and a VM of the same name in another namespace on this token
			// would have a key of this name too: said, never deleted.
			message := fmt.Sprintf("SSH key %d (%s) in DigitalOcean has the original provisioner's name for this VM but a key pair recorded nowhere in this namespace: "+
				"likely a duplicate the original provisioner made and lost, possibly another namespace's VM of the same name; it costs nothing, "+
				"and if no other HobbyFarm namespace uses this token with a VM of this name, delete it (doctl compute ssh-key delete %d)", key.ID, key.Fingerprint, key.ID)
			log.WithField("key", key.ID).Warn(message)
			h.recorder.Event(vm, corev1.EventTypeWarning, "UnrecordedKey", message)
			continue
		}
		err := digitalocean.KeysOf(client).Delete(ctx, key.ID, digitalocean.PriorityTidy)
		if digitalocean.IsHeldBack(err) {
			h.keys.EnqueueAfter(k.Namespace, k.Name, digitalocean.Classify(err).RetryAfter)
			return nil
		}
		if err != nil {
			return err
		}
		message := fmt.Sprintf("deleted SSH key %d (%s) in DigitalOcean: a duplicate the original provisioner made for this VM and never recorded", key.ID, key.Fingerprint)
		log.WithField("key", key.ID).Info(message)
		h.recorder.Event(vm, corev1.EventTypeNormal, "DuplicateKeyDeleted", message)
	}
	h.duplicatesDone.Store(k.UID, true)
	return nil
}

// alphaFingerprints are the fingerprints of the key pairs this namespace
// holds for the alpha Key's VM.
func (h *handler) alphaFingerprints(k *v1alpha1.Key, rec alpha.Key) map[string]bool {
	out := map[string]bool{}
	if rec.Fingerprint != "" {
		out[rec.Fingerprint] = true
	}
	publicKeys := []string{rec.PublicKey}
	if s, err := h.secrets.Get(k.Namespace, cmp.Or(k.Spec.Secret, alpha.SecretName(k.Spec.Machine))); err == nil {
		publicKeys = append(publicKeys, string(s.Data[sshkey.PublicKeyField]))
	}
	for _, p := range publicKeys {
		if fp, err := sshkey.Fingerprint(p); err == nil {
			out[fp] = true
		}
	}
	return out
}

// keyLists keeps each token's key list for a while: one list serves the
// duplicate check of every VM of a takeover.
type keyLists struct {
	mu      sync.Mutex
	byToken map[string]keyList
}

type keyList struct {
	keys []godo.Key
	at   time.Time
}

const keyListLife = 5 * time.Minute

func newKeyLists() *keyLists { return &keyLists{byToken: map[string]keyList{}} }

func (l *keyLists) get(ctx context.Context, client *godo.Client, tokenHash string) ([]godo.Key, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cached, ok := l.byToken[tokenHash]; ok && time.Since(cached.at) < keyListLife {
		return cached.keys, nil
	}
	keys, err := digitalocean.KeysOf(client).List(ctx, digitalocean.PriorityTidy)
	if err != nil {
		return nil, err
	}
	l.byToken[tokenHash] = keyList{keys: keys, at: time.Now()}
	return keys, nil
}
