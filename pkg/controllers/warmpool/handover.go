package warmpool

import (
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	"github.com/sirupsen/logrus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// handOver deletes each claimed member once the claiming VM's Droplet,
// read from the API, holds the member's droplet: the Droplet cleanup then
// releases the member without deleting the droplet, which is the VM's now.
// A member whose claiming VM is gone (or another VM of its name) without
// holding it is deleted too, and its cleanup deletes the droplet. It
// returns the claims handed over and those still waiting for their VM.
func (h *handler) handOver(pool *v1alpha1.WarmPool, members []*v1alpha1.Droplet) (handedOver, pending int, err error) {
	for _, d := range members {
		claim := d.Status.Claim
		if claim == nil || d.DeletionTimestamp != nil {
			continue
		}
		log := logrus.WithField("pool", pool.Name).WithField("member", d.Name).WithField("vm", claim.VirtualMachine).WithField("droplet", d.Status.DropletID)
		held, gone, err := h.claimState(d)
		if err != nil {
			return handedOver, pending, err
		}
		switch {
		case held:
			// Counted once, though a stale cache shows the member again.
			if _, counted := h.handedOver.LoadOrStore(d.UID, true); !counted {
				log.Info("the VM holds the claimed droplet: releasing the pool member")
				handedOver++
				metrics.WarmPoolClaims.WithLabelValues(pool.Spec.Environment, pool.Spec.Template).Inc()
			}
		case gone:
			log.Info("the claiming VM went without taking the droplet: deleting the pool member and its droplet")
		default:
			pending++
			continue
		}
		if err := h.deleteMember(pool, d); err != nil {
			return handedOver, pending, err
		}
	}
	return handedOver, pending, nil
}

// claimState reads whether the claiming VM's Droplet holds d's droplet, or
// else whether that VM is gone or going. Both from the API: a stale cache
// would hand over a droplet the VM never recorded.
func (h *handler) claimState(d *v1alpha1.Droplet) (held, gone bool, err error) {
	claim := d.Status.Claim
	vmDroplet, err := h.droplets.Get(d.Namespace, claim.VirtualMachine, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return false, false, err
	case isControlledBy(vmDroplet, claim.UID) && d.Status.DropletID != 0 && vmDroplet.Status.DropletID == d.Status.DropletID:
		return true, false, nil
	}
	vm, err := h.vms.Get(d.Namespace, claim.VirtualMachine, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, true, nil
	}
	if err != nil {
		return false, false, err
	}
	return false, string(vm.UID) != claim.UID || vm.DeletionTimestamp != nil, nil
}
