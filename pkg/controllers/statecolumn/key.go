package statecolumn

import (
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/rancher/wrangler/v3/pkg/condition"
)

var keyRules = Rules{
	// Registered before usable.
	Order:    []condition.Cond{v1alpha1.Created, v1alpha1.Ready},
	Deleting: "deleting the SSH key in DigitalOcean",
}

// Key is what `kubectl get keys` shows for k: the reason and message of its
// first failing condition, else its stage.
func Key(k *v1alpha1.Key) (state, message string) {
	if state, message, found := keyRules.Stopped(k); found {
		return state, message
	}
	if k.IsRetired() {
		return v1alpha1.KeyStateRetired, v1alpha1.Created.GetMessage(k)
	}
	if k.Status.KeyID == 0 {
		return v1alpha1.KeyStateCreating, "registering the SSH key in DigitalOcean"
	}
	return v1alpha1.KeyStateActive, v1alpha1.Created.GetMessage(k)
}

// StampKey records Key's state in k's status; every status write of a Key
// calls it first, so the column never lags the conditions.
func StampKey(k *v1alpha1.Key) {
	k.Status.State, k.Status.Message = Key(k)
}
