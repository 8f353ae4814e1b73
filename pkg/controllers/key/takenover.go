package key

import (
	"fmt"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
)

// ReasonTakenOver is the Created reason of a Key whose DigitalOcean key the
// original alpha provisioner made (spec.adoptedKeyID).
const ReasonTakenOver = "TakenOver"

// adopt records the alpha's key as k's, with the fingerprint the alpha
// recorded: no request, and the key-pair check then compares the VM's
// Secret with the key the droplet was really made with. Like any VM's own
// key, it is retired once the droplet is taken over.
func (h *handler) adopt(k *v1alpha1.Key) {
	k.Status.KeyID = k.Spec.AdoptedKeyID
	k.Status.NotCreated = false
	if a, err := h.keys.Cache().Get(k.Namespace, alpha.KeyName(vmName(k))); err == nil && alpha.IsKey(a) {
		k.Status.Fingerprint = alpha.KeyOf(a).Fingerprint
	}
	message := fmt.Sprintf("SSH key %d, made by the original provisioner, taken over", k.Status.KeyID)
	events.SetCondition(k, v1alpha1.Created, true, ReasonTakenOver, message)
	events.SetCondition(k, v1alpha1.Ready, true, ReasonTakenOver, message)
}
