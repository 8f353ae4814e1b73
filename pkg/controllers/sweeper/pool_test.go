package sweeper

import (
	"slices"
	"testing"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
)

// A pool droplet a VM took carries the member's identity and the VM's: the
// sweep must see both, or it would judge the droplet by the member alone.
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
