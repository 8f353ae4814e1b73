package warmpool

import (
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	dto "github.com/prometheus/client_model/go"
)

// Droplet time accrues for unclaimed members that have a droplet, from the
// pool's previous pass.
func TestDropletTimeOfUnclaimedMembers(t *testing.T) {
	h := &handler{}
	pool := &v1alpha1.WarmPool{Spec: v1alpha1.WarmPoolSpec{Environment: "acct-env", Template: "t"}}
	pool.UID = "pool-uid"
	withID := func(id int) *v1alpha1.Droplet {
		d := member("m", "h", 1, true)
		d.Status.DropletID = id
		return d
	}
	claimed := withID(3)
	claimed.Status.Claim = &v1alpha1.ClaimRef{VirtualMachine: "vm"}
	members := []*v1alpha1.Droplet{withID(1), withID(2), claimed, withID(0)}

	h.accountDropletTime(pool, members, epoch)
	h.accountDropletTime(pool, members, epoch.Add(10*time.Second))
	var m dto.Metric
	if err := metrics.WarmPoolDropletSeconds.WithLabelValues("acct-env", "t").Write(&m); err != nil {
		t.Fatal(err)
	}
	if got := m.GetCounter().GetValue(); got != 20 {
		t.Errorf("droplet seconds %v, want 20 (2 unclaimed droplets for 10 s)", got)
	}
}
