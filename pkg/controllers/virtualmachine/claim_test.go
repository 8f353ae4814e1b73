package virtualmachine

import (
	"slices"
	"testing"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func poolMember(name, hash string, id int, ready, reachable bool) *v1alpha1.Droplet {
	m := &v1alpha1.Droplet{ObjectMeta: metav1.ObjectMeta{Name: name}}
	m.Spec.Name = name
	m.Spec.Pool = &v1alpha1.PoolMembership{Name: "env-tmpl", RequestHash: hash}
	m.Status.DropletID = id
	events.SetCondition(m, v1alpha1.Ready, ready, "Active", "")
	events.SetCondition(m, v1alpha1.Reachable, reachable, "LoggedIn", "")
	return m
}

func names(ds []*v1alpha1.Droplet) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Name)
	}
	return out
}

func TestClaimableMembers(t *testing.T) {
	now := metav1.Now()
	deleting := poolMember("deleting", "h1", 3, true, true)
	deleting.DeletionTimestamp = &now
	claimed := poolMember("claimed", "h1", 4, true, true)
	claimed.Status.Claim = &v1alpha1.ClaimRef{VirtualMachine: "vm-a", UID: "a"}
	vmsOwn := poolMember("vm-droplet", "h1", 9, true, true)
	vmsOwn.Spec.VirtualMachine = "vm-b" // a VM's Droplet taken from the pool
	members := []*v1alpha1.Droplet{
		poolMember("ready", "h1", 1, true, true),
		poolMember("old-request", "h0", 2, true, true),
		deleting, claimed, vmsOwn,
		poolMember("booting", "h1", 5, false, false),
		poolMember("not-reachable", "h1", 6, true, false),
		poolMember("no-id", "h1", 0, true, true),
		poolMember("ready-2", "h1", 7, true, true),
	}
	got := names(claimable(members, "h1"))
	if want := []string{"ready", "ready-2"}; !slices.Equal(got, want) {
		t.Errorf("claimable = %v, want %v", got, want)
	}
}

func TestClaimedByFindsThisVMsEarlierClaim(t *testing.T) {
	vm := &hfv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vm-a", UID: "a"}}
	mine := poolMember("mine", "h1", 1, true, true)
	mine.Status.Claim = &v1alpha1.ClaimRef{VirtualMachine: "vm-a", UID: "a"}
	sameNameOtherVM := poolMember("theirs", "h1", 2, true, true)
	sameNameOtherVM.Status.Claim = &v1alpha1.ClaimRef{VirtualMachine: "vm-a", UID: "old-a"}
	h := &handler{}
	if got := h.claimedBy(vm, []*v1alpha1.Droplet{sameNameOtherVM, poolMember("free", "h1", 3, true, true)}); got != nil {
		t.Errorf("claimedBy = %s, want none: a VM of the same name with another UID is another VM", got.Name)
	}
	if got := h.claimedBy(vm, []*v1alpha1.Droplet{sameNameOtherVM, mine}); got == nil || got.Name != "mine" {
		t.Errorf("claimedBy = %v, want mine", got)
	}
}

func TestClaimedSpecIsAdoptedNeverCreated(t *testing.T) {
	m := poolMember("hfdo-pool-abc", "h1", 42, true, true)
	m.Spec.KeyRefs = []string{"hfdo-pool-abc"}
	for _, shared := range []bool{false, true} {
		spec := v1alpha1.DropletSpec{VirtualMachine: "vm-a", Name: "vm-a", KeyRefs: []string{"own-or-shared"}}
		(&taken{member: m}).claimed(&spec, shared)
		if spec.Name != "hfdo-pool-abc" || spec.ClaimedDropletID != 42 || spec.Pool == nil || spec.Pool.RequestHash != "h1" || spec.VirtualMachine != "vm-a" {
			t.Errorf("shared=%v: claimed spec = %+v", shared, spec)
		}
		if wantKeys := shared; (len(spec.KeyRefs) == 1) != wantKeys {
			t.Errorf("shared=%v: keyRefs = %v; a VM with its own key gets none (no Key object), a shared one keeps the shared Key", shared, spec.KeyRefs)
		}
	}
}
