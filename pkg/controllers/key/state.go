package key

import (
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/statecolumn"
	"github.com/rancher/wrangler/v3/pkg/condition"
)

// Stages of a Key that nothing stops, shown as its state.
const (
	StateCreating = "Creating"
	StateActive   = "Active"
	// StateRetired: deleted in DigitalOcean once its droplet existed (see retire.go).
	StateRetired  = ReasonRetired
	StateDeleting = statecolumn.Deleting
)

var stateRules = statecolumn.Rules{
	// Registered before usable.
	Order:    []condition.Cond{v1alpha1.Created, v1alpha1.Ready},
	Deleting: "deleting the SSH key in DigitalOcean",
}

// State is what `kubectl get keys` shows for k: the reason and message of
// its first failing condition, else its stage.
func State(k *v1alpha1.Key) (state, message string) {
	if state, message, found := stateRules.Stopped(k); found {
		return state, message
	}
	if retired(k) {
		return StateRetired, v1alpha1.Created.GetMessage(k)
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
