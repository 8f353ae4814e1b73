package virtualmachine

import (
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/rancher/wrangler/v3/pkg/generic"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// cleanupPoll re-checks a deleting VM in case a watch event is missed.
const cleanupPoll = 10 * time.Second

// cleanup runs when a VM is deleted. It deletes the VM's Droplet and Key,
// whose own finalizers remove them from DigitalOcean, and keeps the VM's
// finalizer until both are gone. Other finalizers on the VM are not ours to touch.
func (h *handler) cleanup(_ string, vm *hfv1.VirtualMachine) (*hfv1.VirtualMachine, error) {
	log := logrus.WithField("vm", vm.Name)
	pending := false

	// Read from the API, not the cache: releasing the finalizer early on a
	// stale cache would be the one unrecoverable mistake here.
	if d, err := h.droplets.Get(vm.Namespace, vm.Name, metav1.GetOptions{}); err == nil {
		pending = true
		if d.DeletionTimestamp == nil {
			log.Info("VM deleted; deleting its droplet")
			h.recorder.Event(vm, corev1.EventTypeNormal, "Deleting", "deleting the DigitalOcean droplet and key")
			if err := h.droplets.Delete(vm.Namespace, vm.Name, nil); err != nil && !apierrors.IsNotFound(err) {
				return vm, err
			}
		}
	} else if !apierrors.IsNotFound(err) {
		return vm, err
	}

	if k, err := h.keys.Get(vm.Namespace, vm.Name, metav1.GetOptions{}); err == nil {
		pending = true
		if k.DeletionTimestamp == nil {
			if err := h.keys.Delete(vm.Namespace, vm.Name, nil); err != nil && !apierrors.IsNotFound(err) {
				return vm, err
			}
		}
	} else if !apierrors.IsNotFound(err) {
		return vm, err
	}

	if pending {
		// The Droplet's and Key's removal re-enqueues the VM; the poll is a safety net.
		h.vms.EnqueueAfter(vm.Namespace, vm.Name, cleanupPoll)
		return vm, generic.ErrSkip
	}
	// Only now may the token go; the key pair is useless without the droplet.
	// Garbage collection would get them too, but not while another
	// controller's finalizer keeps the VM.
	for _, name := range []string{SSHSecretName(vm), TokenSecretName(vm)} {
		if err := h.secrets.Delete(vm.Namespace, name, nil); err != nil && !apierrors.IsNotFound(err) {
			return vm, err
		}
	}
	log.Info("droplet and key are gone from DigitalOcean; releasing VM")
	h.recorder.Event(vm, corev1.EventTypeNormal, "Deleted", "DigitalOcean droplet and key deleted")
	return vm, nil
}
