package key

import (
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/pass"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/statecolumn"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

// withPass gives h the plumbing of its passes, its Events recorded by rec.
func (h *handler) withPass(rec record.EventRecorder) *handler {
	h.pass = pass.New[*v1alpha1.Key]("Key", keyKind{h}, rec)
	return h
}

// keyKind is what differs for Keys in a pass's plumbing.
type keyKind struct{ h *handler }

func (keyKind) Status(k *v1alpha1.Key) any { return k.Status }

func (keyKind) Stamp(k *v1alpha1.Key) { statecolumn.StampKey(k) }

func (keyKind) BeforeWrite(*v1alpha1.Key) {}

func (k keyKind) UpdateStatus(key *v1alpha1.Key) (*v1alpha1.Key, error) {
	return k.h.keys.UpdateStatus(key)
}

func (keyKind) Written(*v1alpha1.Key) {}

func (k keyKind) EnqueueAfter(key *v1alpha1.Key, after time.Duration) {
	k.h.keys.EnqueueAfter(key.Namespace, key.Name, after)
}

func (keyKind) Log(k *v1alpha1.Key) *logrus.Entry { return logrus.WithField("vm", vmName(k)) }

// AlsoTold: a Key's every change is told on its VM, which has no other
// word of its key.
func (k keyKind) AlsoTold(key *v1alpha1.Key, _ bool) []runtime.Object {
	return []runtime.Object{k.h.vmOf(key)}
}

func (keyKind) Origin(k *v1alpha1.Key) digitalocean.Origin {
	return digitalocean.OriginOf(k, k.Spec.TokenSecretRef.Name)
}

// Setting: a Key sends no config setting of the Environment's.
func (keyKind) Setting(*v1alpha1.Key, string) string { return "" }

// Forget drops the record of a create sent (see handler.sent).
func (k keyKind) Forget(key *v1alpha1.Key) { k.h.sent.Delete(key.UID) }
