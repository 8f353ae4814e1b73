package drain

import (
	"strings"
	"testing"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
)

// ours is a Droplet of ours for vm, as the VM controller names it.
func ours(vm string, edit func(*v1alpha1.Droplet)) *v1alpha1.Droplet {
	d := &v1alpha1.Droplet{}
	d.Name, d.Spec.VirtualMachine, d.Spec.Name = vm, vm, "hf-"+vm
	edit(d)
	return d
}

// A rollback hands the namespace back to the alpha, which deletes only the
// droplets its own Droplets record: any other droplet a Droplet of ours
// holds would bill forever, so the release is refused, naming its holder.
func TestRollbackRefusedForDropletsTheAlphaDoesNotRecord(t *testing.T) {
	takenOver := ours("vm-alpha", func(d *v1alpha1.Droplet) { d.Spec.AdoptedDropletID, d.Status.DropletID = 11, 11 })
	adopting := ours("vm-adopting", func(d *v1alpha1.Droplet) { d.Spec.AdoptedDropletID = 12 })
	placeholder := ours("vm-invalid", func(d *v1alpha1.Droplet) { d.Spec.Name = "" })
	refused := ours("vm-refused", func(d *v1alpha1.Droplet) {
		v1alpha1.Created.SetStatus(d, "False")
		d.Status.NotCreated = true
	})
	waiting := ours("vm-waiting", func(d *v1alpha1.Droplet) {
		v1alpha1.Created.SetStatus(d, "False")
		v1alpha1.Created.Reason(d, v1alpha1.ReasonWaitingForRoom)
	})
	alphas := []*v1alpha1.Droplet{alphaDroplet("vm-alpha", 11), alphaDroplet("vm-adopting", 12), alphaDroplet("vm-gone", 13)}
	fine := append([]*v1alpha1.Droplet{takenOver, adopting, placeholder, refused, waiting}, alphas...)
	if err := refuseCreated(objects{droplets: fine}); err != nil {
		t.Fatalf("only the alpha's droplets held: %v", err)
	}

	for _, c := range []struct {
		name string
		d    *v1alpha1.Droplet
		want string
	}{
		{"a VM created since the upgrade", ours("vm-new", func(d *v1alpha1.Droplet) { d.Status.DropletID = 21 }), "VM vm-new (droplet 21)"},
		{"a create sent, unanswered", ours("vm-sent", func(d *v1alpha1.Droplet) { v1alpha1.Created.SetStatus(d, "Unknown") }),
			"VM vm-sent (a droplet whose create was sent, its ID not recorded yet)"},
		{"a warm pool's member", &v1alpha1.Droplet{Spec: v1alpha1.DropletSpec{Name: "m", Pool: &v1alpha1.PoolMembership{Name: "env-ubuntu"}},
			Status: v1alpha1.DropletStatus{DropletID: 22}}, "warm pool env-ubuntu (droplet 22)"},
		{"a claimed member", &v1alpha1.Droplet{Spec: v1alpha1.DropletSpec{Name: "m", Pool: &v1alpha1.PoolMembership{Name: "env-ubuntu"}},
			Status: v1alpha1.DropletStatus{DropletID: 23, Claim: &v1alpha1.ClaimRef{VirtualMachine: "vm-claim"}}}, "VM vm-claim (droplet 23)"},
		{"a VM's droplet taken from a pool", ours("vm-pooled", func(d *v1alpha1.Droplet) { d.Spec.ClaimedDropletID = 24 }), "VM vm-pooled (droplet 24)"},
		{"an adopted droplet no alpha Droplet records", ours("vm-unrecorded", func(d *v1alpha1.Droplet) { d.Spec.AdoptedDropletID = 25 }),
			"VM vm-unrecorded (droplet 25)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := refuseCreated(objects{droplets: append(fine, c.d)})
			if err == nil {
				t.Fatal("not refused")
			}
			if msg := err.Error(); !strings.Contains(msg, "held by "+c.want+";") || strings.Contains(msg, "\n") ||
				!strings.Contains(msg, "delete those VMs") || strings.Contains(msg, "vm-alpha") {
				t.Errorf("refusal %q does not name only %q and the fix on one line", msg, c.want)
			}
		})
	}
}
