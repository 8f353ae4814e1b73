package droplet

import (
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/pass"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/statecolumn"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
	"github.com/sirupsen/logrus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

// withPass gives h the plumbing of its passes, its Events recorded by rec.
func (h *handler) withPass(rec record.EventRecorder) *handler {
	h.pass = pass.New[*v1alpha1.Droplet]("Droplet", dropletKind{h}, rec)
	return h
}

// dropletKind is what differs for Droplets in a pass's plumbing.
type dropletKind struct{ h *handler }

func (dropletKind) Status(d *v1alpha1.Droplet) any { return d.Status }

func (dropletKind) Stamp(d *v1alpha1.Droplet) { statecolumn.StampDroplet(d) }

// BeforeWrite: the first write records the config as valid (the VM
// controller makes a Droplet only from a valid one), and every write when
// the Droplet was last synced.
func (dropletKind) BeforeWrite(d *v1alpha1.Droplet) {
	events.MarkConfigValid(d)
	now := metav1.Now()
	d.Status.LastSynced = &now
}

func (k dropletKind) UpdateStatus(d *v1alpha1.Droplet) (*v1alpha1.Droplet, error) {
	return k.h.droplets.UpdateStatus(d)
}

func (k dropletKind) Written(d *v1alpha1.Droplet) { k.h.notes.noteRecorded(d) }

func (k dropletKind) EnqueueAfter(d *v1alpha1.Droplet, after time.Duration) {
	k.h.droplets.EnqueueAfter(d.Namespace, d.Name, after)
}

func (dropletKind) Log(d *v1alpha1.Droplet) *logrus.Entry { return logFor(d) }

// AlsoTold: a problem is told on the VM too; its progress the VM's own
// Events tell.
func (k dropletKind) AlsoTold(d *v1alpha1.Droplet, ok bool) []runtime.Object {
	if ok {
		return nil
	}
	return []runtime.Object{k.h.vmOf(d)}
}

func (dropletKind) Origin(d *v1alpha1.Droplet) digitalocean.Origin {
	return digitalocean.OriginOf(d, d.Spec.TokenSecretRef.Name)
}

func (dropletKind) Setting(d *v1alpha1.Droplet, key string) string { return settingValue(d, key) }

// Forget drops the process notes, the reachability check's state and d's
// place in a droplet limit line.
func (k dropletKind) Forget(d *v1alpha1.Droplet) {
	k.h.notes.discard(d)
	k.h.prober.discard(cache.MetaObjectToName(d).String())
	k.h.limits.done(cache.MetaObjectToName(d).String())
}
