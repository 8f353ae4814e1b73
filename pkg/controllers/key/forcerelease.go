package key

import (
	"fmt"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
)

// forceRelease forgets a deleting Key without deleting its key in
// DigitalOcean, as v1alpha1.ForceReleaseAnnotation asks, and names on the
// Key and its VM what may be left behind.
func (h *handler) forceRelease(k *v1alpha1.Key) {
	h.pass.Succeeded(k)
	what := fmt.Sprintf("an SSH key named %q (no ID was recorded)", k.Spec.Name)
	if k.Status.KeyID != 0 {
		what = fmt.Sprintf("SSH key %d (%s, fingerprint %s)", k.Status.KeyID, k.Spec.Name, k.Status.Fingerprint)
	}
	message := fmt.Sprintf("released by %s without deleting in DigitalOcean: %s may still be registered; "+
		"delete it with `doctl compute ssh-key list` and `doctl compute ssh-key delete`", v1alpha1.ForceReleaseAnnotation, what)
	logrus.WithField("vm", vmName(k)).WithField("key", k.Status.KeyID).Warn(message)
	events.Record(h.recorder, corev1.EventTypeWarning, v1alpha1.ForceReleased, message, k, h.vmOf(k))
}
