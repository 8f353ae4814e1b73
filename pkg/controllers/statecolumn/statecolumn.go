// Package statecolumn works out the STATE and MESSAGE columns of our objects
// (`kubectl get droplets`, `kubectl get keys`) from their conditions, and
// which of those conditions mean a failure someone must act on.
package statecolumn

import (
	"slices"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/rancher/wrangler/v3/pkg/condition"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Deleting is the state of an object being deleted whose delete has not failed.
const Deleting = "Deleting"

// Rules say how an object's conditions name its state.
type Rules struct {
	// Order is the order in which conditions are searched for a failing
	// one: the way the object goes, so that a cause comes before what it causes.
	Order []condition.Cond
	// OnTheWay are the False reasons of a condition that are the normal way
	// to ready, not a failure: the caller's stage says them.
	OnTheWay map[condition.Cond][]string
	// Deleting says what is done while the object is being deleted.
	Deleting string
}

// Stopped is what stops obj, as its state and message; found is false when
// nothing does and the caller names obj's stage. An object being deleted is
// past provisioning: only the delete's own failure counts then.
func (r Rules) Stopped(obj metav1.Object) (state, message string, found bool) {
	if obj.GetDeletionTimestamp() != nil {
		if v1alpha1.Deleting.IsFalse(obj) {
			return v1alpha1.Deleting.GetReason(obj), v1alpha1.Deleting.GetMessage(obj), true
		}
		return Deleting, r.Deleting, true
	}
	for _, cond := range r.Order {
		if reason := cond.GetReason(obj); cond.IsFalse(obj) && !slices.Contains(r.OnTheWay[cond], reason) {
			return reason, cond.GetMessage(obj), true
		}
	}
	return "", "", false
}
