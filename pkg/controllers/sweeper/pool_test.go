package sweeper

import (
	"slices"
	"testing"

	"github.com/digitalocean/godo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
)

// A pool droplet a VM took under an earlier version carries the member's
// identity and the VM's: the sweep must see both, or it would judge the
// droplet by the member alone.
func TestVMUIDsOfATakenPoolDroplet(t *testing.T) {
	tags := append(digitalocean.DropletTags("inst", "ns", "hfdo-pool-abc", "member-uid", nil),
		digitalocean.PoolTag("pool-uid"), digitalocean.VMTag("vm-uid"), "hfdo-vmname:vm-a")
	if got := vmUIDs(tags); !slices.Equal(got, []string{"member-uid", "vm-uid"}) {
		t.Errorf("vmUIDs = %v, want the member's and the VM's", got)
	}
	if got := vmUIDs([]string{"web", digitalocean.PoolTag("pool-uid")}); len(got) != 0 {
		t.Errorf("vmUIDs = %v, want none", got)
	}
}

// A droplet a VM took from a warm pool keeps the member's tags, and the
// member object is gone after the handover: the sweep spares it while the
// VM whose Droplet holds its ID lives, and sweeps it once that VM is gone.
func TestClaimedUntaggedDropletIsJudgedByItsVM(t *testing.T) {
	claimed := godo.Droplet{ID: 42, Name: "hfdo-pool-abc",
		Tags: digitalocean.PoolDropletTags("inst", "ns", "member-uid", "pool-uid", nil)}
	r := records{byID: map[int][]string{}, byBatchName: map[string]string{}}
	r.hold(42, "vm-uid") // the VM's Droplet holds its ID
	if r.orphaned(claimed, map[string]bool{"vm-uid": true}) {
		t.Error("swept a claimed droplet whose VM lives")
	}
	if !r.orphaned(claimed, map[string]bool{"another-vm": true}) {
		t.Error("kept a claimed droplet whose VM is gone")
	}
	foreign := godo.Droplet{ID: 7, Tags: []string{"web"}}
	if r.orphaned(foreign, map[string]bool{}) {
		t.Error("swept a droplet that names no VM and is on no record")
	}
}
