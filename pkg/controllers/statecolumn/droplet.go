package statecolumn

import (
	"fmt"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshprobe"
	"github.com/rancher/wrangler/v3/pkg/condition"
)

var dropletRules = Rules{
	// The way a VM goes: a bad config before a create never sent.
	Order: []condition.Cond{
		v1alpha1.Configured, v1alpha1.KeyPair, v1alpha1.Created, v1alpha1.Ready, v1alpha1.Reachable,
	},
	OnTheWay: map[condition.Cond][]string{
		v1alpha1.Created:   {v1alpha1.ReasonCreating, v1alpha1.ReasonNextRegion},
		v1alpha1.Ready:     {"Booting"},
		v1alpha1.Reachable: {sshprobe.ReasonUnreachable, sshprobe.ReasonCloudInitRunning},
	},
	Deleting: "deleting the droplet in DigitalOcean",
}

// FailedReachability lists the Reachable reasons that no wait will cure
// without someone acting: the VM is reported failed.
var FailedReachability = []string{v1alpha1.ReasonReadyTimeout, sshprobe.ReasonCloudInitFailed}

// Droplet is what `kubectl get droplets` shows for d: the reason and
// message of its first failing condition, else its stage.
func Droplet(d *v1alpha1.Droplet) (state, message string) {
	if state, message, found := dropletRules.Stopped(d); found {
		return state, message
	}
	switch {
	case d.Status.DropletID == 0:
		return v1alpha1.DropletStateCreating, orDefault(v1alpha1.Created.GetMessage(d), "waiting to create the droplet in DigitalOcean")
	case !v1alpha1.Ready.IsTrue(d):
		return v1alpha1.DropletStateBooting, orDefault(v1alpha1.Ready.GetMessage(d), fmt.Sprintf("droplet %d is %s", d.Status.DropletID, d.Status.Status))
	case !v1alpha1.Reachable.IsTrue(d):
		return v1alpha1.DropletStateBooting, orDefault(v1alpha1.Reachable.GetMessage(d), "checking that the VM's user can log in")
	}
	return v1alpha1.DropletStateActive, v1alpha1.Ready.GetMessage(d)
}

// StampDroplet records Droplet's state in d's status. Every status write of
// a Droplet calls it, so the column never lags the conditions.
func StampDroplet(d *v1alpha1.Droplet) {
	d.Status.State, d.Status.Message = Droplet(d)
}

func orDefault(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
