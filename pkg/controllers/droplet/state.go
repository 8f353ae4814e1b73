package droplet

import (
	"fmt"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	keycontroller "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/key"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/statecolumn"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshprobe"
	"github.com/rancher/wrangler/v3/pkg/condition"
)

// Stages of a Droplet that nothing stops, shown as its state.
const (
	StateCreating = "Creating"
	StateBooting  = "Booting"
	StateActive   = "Active"
	StateDeleting = statecolumn.Deleting
)

var stateRules = statecolumn.Rules{
	// The way a VM goes: a bad config before a create never sent.
	Order: []condition.Cond{
		v1alpha1.Configured, v1alpha1.KeyPair, v1alpha1.Created, v1alpha1.Ready, v1alpha1.Reachable,
	},
	OnTheWay: map[condition.Cond][]string{
		v1alpha1.Created:   {ReasonCreating},
		v1alpha1.Ready:     {"Booting"},
		v1alpha1.Reachable: {sshprobe.ReasonUnreachable, sshprobe.ReasonCloudInitRunning},
	},
	Deleting: "deleting the droplet in DigitalOcean",
}

// State is what `kubectl get droplets` shows for d: the reason and message
// of its first failing condition, else its stage.
func State(d *v1alpha1.Droplet) (state, message string) {
	if state, message, found := stateRules.Stopped(d); found {
		return state, message
	}
	switch {
	case d.Status.DropletID == 0:
		return StateCreating, orDefault(v1alpha1.Created.GetMessage(d), "waiting to create the droplet in DigitalOcean")
	case !v1alpha1.Ready.IsTrue(d):
		return StateBooting, orDefault(v1alpha1.Ready.GetMessage(d), fmt.Sprintf("droplet %d is %s", d.Status.DropletID, d.Status.Status))
	case !v1alpha1.Reachable.IsTrue(d):
		return StateBooting, orDefault(v1alpha1.Reachable.GetMessage(d), "checking that the VM's user can log in")
	}
	return StateActive, v1alpha1.Ready.GetMessage(d)
}

// StampState records State in d's status. Every status write of a Droplet
// calls it, so the column never lags the conditions.
func StampState(d *v1alpha1.Droplet) {
	d.Status.State, d.Status.Message = State(d)
}

// waitingForKey says why a create waits for the Key name (nil when not
// found), with the Key's state when that names a problem: the Droplet's
// MESSAGE then points at the cause.
func waitingForKey(name string, k *v1alpha1.Key) string {
	message := fmt.Sprintf("waiting for Key %q to be created in DigitalOcean", name)
	if k != nil && k.Status.State != "" && k.Status.State != keycontroller.StateCreating {
		message += fmt.Sprintf(" (the Key is %s: %s)", k.Status.State, k.Status.Message)
	}
	return message
}

func orDefault(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
