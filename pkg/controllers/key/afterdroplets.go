package key

import (
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
)

// Keys go after droplets. When an event ends, every droplet delete goes
// before any key delete: a droplet bills every hour, a key at DigitalOcean
// costs nothing (its pair is in a Secret that goes with the VM), and
// DigitalOcean has no batch delete for keys, so one DELETE per VM would
// take the token's budget from the droplets' batches. A deleting Key's
// cleanup therefore waits until
//   - its own Droplet is gone from Kubernetes (that droplet is deleted), and
//   - this installation's Droplet deletes have paused for a delay
//     (deletepause; at most deletepause.MaxDeferDelays delays after the
//     Key's deletion, should deletes never pause),
//
// and then deletes the key at the tidy priority. The VM does not wait for
// it once the Key records its key's ID (virtualmachine's cleanup hands the
// Key off): the Key's finalizer keeps the duty across restarts, and a token
// Secret of the VM's stays while the Key names it (tokensecret).

// dropletGonePoll is how soon a Key whose Droplet remains looks again; the
// Droplet's removal queues the Key sooner (Register's watch).
const dropletGonePoll = 30 * time.Second

// waitForDroplets says how long k's key delete must still wait for the
// droplets' deletes; 0 when it may go.
func (h *handler) waitForDroplets(k *v1alpha1.Key) time.Duration {
	if _, err := h.droplets.Get(k.Namespace, k.Name); err == nil {
		return dropletGonePoll
	}
	since := time.Now()
	if k.DeletionTimestamp != nil {
		since = k.DeletionTimestamp.Time
	}
	return h.pause.Wait(time.Now(), since, h.pauseDelay)
}

// vmDeleting: k is a VM's Key and the VM is being deleted, so the key's
// delete is the cleanup's, after the droplets, not a retirement.
func (h *handler) vmDeleting(k *v1alpha1.Key) bool {
	vm := h.vmOf(k)
	return vm != nil && vm.DeletionTimestamp != nil
}
