package droplet

import (
	"fmt"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// handoverPoll is how often a deleted, claimed pool member looks again for
// its VM's Droplet to record the droplet.
const handoverPoll = 2 * time.Second

// handover is what the cleanup of a claimed pool member does with its droplet.
type handover int

const (
	// deleteClaimed: the claim lapsed (its VM is gone or going, and never
	// recorded the droplet): the droplet is deleted as any other.
	deleteClaimed handover = iota
	// handedOver: the VM's Droplet recorded the droplet, which is the VM's now.
	handedOver
	// awaitHandover: the VM lives and its Droplet has yet to record it.
	awaitHandover
)

// handoverOf decides for a claimed member. vmDroplet and vm are the
// claiming VM's Droplet and VM as the API has them, nil when not found.
func handoverOf(member, vmDroplet *v1alpha1.Droplet, vm *hfv1.VirtualMachine) handover {
	claim := member.Status.Claim
	switch {
	case vmDroplet != nil && member.Status.DropletID != 0 && vmDroplet.Status.DropletID == member.Status.DropletID:
		return handedOver
	case vm != nil && string(vm.UID) == claim.UID && vm.DeletionTimestamp == nil:
		return awaitHandover
	}
	return deleteClaimed
}

// claimedMember decides the cleanup of a claimed member from the API (a
// stale cache could hand over a droplet no VM recorded, or delete one a
// VM just took).
func (h *handler) claimedMember(d *v1alpha1.Droplet) (handover, error) {
	claim := d.Status.Claim
	vmDroplet, err := h.droplets.Get(d.Namespace, claim.VirtualMachine, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		vmDroplet, err = nil, nil
	}
	if err != nil {
		return 0, err
	}
	vm, err := h.vmClient.Get(d.Namespace, claim.VirtualMachine, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		vm, err = nil, nil
	}
	if err != nil {
		return 0, err
	}
	return handoverOf(d, vmDroplet, vm), nil
}

// releaseHandedOver lets a member go whose droplet its VM now owns.
func (h *handler) releaseHandedOver(d *v1alpha1.Droplet) {
	message := fmt.Sprintf("droplet %d handed over to VM %q; not deleted", d.Status.DropletID, d.Status.Claim.VirtualMachine)
	logFor(d).WithField("droplet", d.Status.DropletID).WithField("claimed_by", d.Status.Claim.VirtualMachine).Info(message)
	h.recorder.Event(d, corev1.EventTypeNormal, "HandedOver", message)
	h.pass.Forget(d)
}
