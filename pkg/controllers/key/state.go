package key

import (
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/rancher/wrangler/v3/pkg/condition"
)

// Stages of a Key that nothing stops, shown as its state.
const (
	StateCreating = "Creating"
	StateActive   = "Active"
	StateDeleting = "Deleting"
)

// failureOrder is the order in which conditions are searched for the one
// that names a Key's state: registered before usable.
var failureOrder = []condition.Cond{v1alpha1.Created, v1alpha1.Ready}

// State is what `kubectl get keys` shows for k: the reason and message of
// its first failing condition, else its stage. A Key being deleted is past
// registration: only the delete's own failure counts then.
func State(k *v1alpha1.Key) (state, message string) {
	if k.DeletionTimestamp != nil {
		if v1alpha1.Deleting.IsFalse(k) {
			return v1alpha1.Deleting.GetReason(k), v1alpha1.Deleting.GetMessage(k)
		}
		return StateDeleting, "deleting the SSH key in DigitalOcean"
	}
	for _, cond := range failureOrder {
		if cond.IsFalse(k) {
			return cond.GetReason(k), cond.GetMessage(k)
		}
	}
	if k.Status.KeyID == 0 {
		return StateCreating, "registering the SSH key in DigitalOcean"
	}
	return StateActive, v1alpha1.Created.GetMessage(k)
}

// StampState records State in k's status; every status write of a Key
// calls it first, so the column never lags the conditions.
func StampState(k *v1alpha1.Key) {
	k.Status.State, k.Status.Message = State(k)
}
