package testutil

import (
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
	"github.com/rancher/wrangler/v3/pkg/condition"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition is one condition of a test object.
type Condition struct {
	Cond    condition.Cond
	OK      bool
	Reason  string
	Message string
}

// Cond is a Condition, for tables too wide for keyed fields.
func Cond(cond condition.Cond, ok bool, reason, message string) Condition {
	return Condition{Cond: cond, OK: ok, Reason: reason, Message: message}
}

// InState sets conds on obj's status in order, and marks obj as being
// deleted when deleting: the object as a controller would have left it.
func InState(obj metav1.Object, deleting bool, conds ...Condition) {
	if deleting {
		now := metav1.Now()
		obj.SetDeletionTimestamp(&now)
	}
	for _, c := range conds {
		events.SetCondition(obj, c.Cond, c.OK, c.Reason, c.Message)
	}
}
