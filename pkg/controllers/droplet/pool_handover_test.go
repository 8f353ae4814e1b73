package droplet

import (
	"testing"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestHandoverOfAClaimedMember(t *testing.T) {
	member := &v1alpha1.Droplet{Status: v1alpha1.DropletStatus{DropletID: 42,
		Claim: &v1alpha1.ClaimRef{VirtualMachine: "vm-a", UID: "uid-a"}}}
	member.Spec.Pool = &v1alpha1.PoolMembership{Name: "pool"}
	recorded := &v1alpha1.Droplet{Spec: v1alpha1.DropletSpec{ClaimedDropletID: 42}, Status: v1alpha1.DropletStatus{DropletID: 42}}
	notYet := &v1alpha1.Droplet{Spec: v1alpha1.DropletSpec{ClaimedDropletID: 42}}
	other := &v1alpha1.Droplet{Status: v1alpha1.DropletStatus{DropletID: 7}}
	now := metav1.Now()
	vm := &hfv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vm-a", UID: "uid-a"}}
	deletingVM := vm.DeepCopy()
	deletingVM.DeletionTimestamp = &now
	sameNameNewVM := &hfv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vm-a", UID: "uid-b"}}

	for _, c := range []struct {
		name      string
		vmDroplet *v1alpha1.Droplet
		vm        *hfv1.VirtualMachine
		want      handover
	}{
		{"the VM's Droplet recorded the droplet", recorded, vm, handedOver},
		{"recorded, and the VM is going: its own cleanup deletes it", recorded, deletingVM, handedOver},
		{"recorded, VM gone already", recorded, nil, handedOver},
		{"the VM lives and has yet to record it", notYet, vm, awaitHandover},
		{"the VM lives, its Droplet not made yet", nil, vm, awaitHandover},
		{"the VM is going and never recorded it", notYet, deletingVM, deleteClaimed},
		{"the VM is gone", nil, nil, deleteClaimed},
		{"another VM of the same name", notYet, sameNameNewVM, deleteClaimed},
		{"the VM's Droplet has another droplet", other, sameNameNewVM, deleteClaimed},
	} {
		if got := handoverOf(member, c.vmDroplet, c.vm); got != c.want {
			t.Errorf("%s: handover = %d, want %d", c.name, got, c.want)
		}
	}
}
