package statecolumn

import (
	"strings"
	"testing"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshprobe"
)

// set makes one condition of a test Droplet.
var set = testutil.Cond

func testDroplet(id int, deleting bool, conds ...testutil.Condition) *v1alpha1.Droplet {
	d := &v1alpha1.Droplet{Spec: v1alpha1.DropletSpec{Name: "vm"}, Status: v1alpha1.DropletStatus{DropletID: id}}
	testutil.InState(d, deleting, conds...)
	return d
}

var (
	configValid = set(v1alpha1.Configured, true, v1alpha1.ReasonConfigValid, v1alpha1.MessageConfigValid)
	created     = set(v1alpha1.Created, true, "Created", "droplet 7 created in nyc1")
	active      = set(v1alpha1.Ready, true, "Active", "droplet is active at 10.0.0.7")
	loggedIn    = set(v1alpha1.Reachable, true, sshprobe.ReasonLoggedIn, "logged in as root")
)

func TestDroplet(t *testing.T) {
	for _, c := range []struct {
		name       string
		d          *v1alpha1.Droplet
		state      string
		messageHas string
	}{
		// Each condition failing, with everything after it as it would be.
		{"config invalid", testDroplet(0, false, set(v1alpha1.Configured, false, "InvalidConfig", `"region": is missing`)),
			"InvalidConfig", `"region": is missing`},
		{"key pair lost", testDroplet(7, false, configValid, created, active, loggedIn,
			set(v1alpha1.KeyPair, false, "KeySecretLost", "Secret vm-ssh was deleted")), "KeySecretLost", "vm-ssh"},
		{"create refused", testDroplet(0, false, configValid, set(v1alpha1.Created, false, "Rejected", "invalid region")),
			"Rejected", "invalid region"},
		{"token unavailable", testDroplet(0, false, configValid, set(v1alpha1.Created, false, "TokenUnavailable", "Secret do-token")),
			"TokenUnavailable", "do-token"},
		{"waiting for a failing key", testDroplet(0, false, configValid,
			set(v1alpha1.Created, false, v1alpha1.ReasonWaitingForKey, `waiting for Key "vm" to be created in DigitalOcean (the Key is Unauthorized: DigitalOcean rejected the API token)`)),
			v1alpha1.ReasonWaitingForKey, "the Key is Unauthorized: DigitalOcean rejected the API token"},
		{"droplet gone", testDroplet(7, false, configValid, created, set(v1alpha1.Ready, false, "NotFound", "DigitalOcean does not know droplet 7")),
			"NotFound", "droplet 7"},
		{"unreachable past the timeout", testDroplet(7, false, configValid, created, active,
			set(v1alpha1.Reachable, false, v1alpha1.ReasonReadyTimeout, "not reachable within ready_timeout")), v1alpha1.ReasonReadyTimeout, "ready_timeout"},
		{"cloud-init failed", testDroplet(7, false, configValid, created, active,
			set(v1alpha1.Reachable, false, sshprobe.ReasonCloudInitFailed, "cloud-init status: error")), sshprobe.ReasonCloudInitFailed, "error"},
		{"delete failing", testDroplet(7, true, configValid, created, active, loggedIn,
			set(v1alpha1.Deleting, false, "Unauthorized", "cannot delete")), "Unauthorized", "cannot delete"},

		// The first failing condition wins, in stateRules.Order.
		{"config before create", testDroplet(0, false, set(v1alpha1.Created, false, "Rejected", "x"),
			set(v1alpha1.Configured, false, "InvalidConfig", "bad size")), "InvalidConfig", "bad size"},
		{"create before readiness", testDroplet(7, false, set(v1alpha1.Ready, false, "RateLimited", "429"),
			set(v1alpha1.Created, false, "CreateUnconfirmed", "timeout")), "CreateUnconfirmed", "timeout"},

		// Each stage.
		{"new", testDroplet(0, false), v1alpha1.DropletStateCreating, "waiting to create"},
		{"placeholder config unknown", &v1alpha1.Droplet{}, v1alpha1.DropletStateCreating, ""},
		{"create sent", testDroplet(0, false, configValid, set(v1alpha1.Created, false, "Creating", "creating the droplet in DigitalOcean")),
			v1alpha1.DropletStateCreating, "creating the droplet"},
		{"booting", testDroplet(7, false, configValid, created, set(v1alpha1.Ready, false, "Booting", "droplet status is new")),
			v1alpha1.DropletStateBooting, "status is new"},
		{"created, not read yet", testDroplet(7, false, configValid, created), v1alpha1.DropletStateBooting, "droplet 7"},
		{"waiting for sshd", testDroplet(7, false, configValid, created, active,
			set(v1alpha1.Reachable, false, sshprobe.ReasonUnreachable, "connection refused")), v1alpha1.DropletStateBooting, "connection refused"},
		{"waiting for cloud-init", testDroplet(7, false, configValid, created, active,
			set(v1alpha1.Reachable, false, sshprobe.ReasonCloudInitRunning, "cloud-init is running")), v1alpha1.DropletStateBooting, "cloud-init"},
		{"active, not checked yet", testDroplet(7, false, configValid, created, active), v1alpha1.DropletStateBooting, "log in"},
		{"active", testDroplet(7, false, configValid, created, active, loggedIn), v1alpha1.DropletStateActive, "active at 10.0.0.7"},
		{"ready_check none", testDroplet(7, false, configValid, created, active,
			set(v1alpha1.Reachable, true, v1alpha1.ReasonNotChecked, "ready_check is none")), v1alpha1.DropletStateActive, "active"},
		{"deleting", testDroplet(7, true, configValid, created, active, loggedIn), Deleting, "deleting"},
		{"deleting what failed to create", testDroplet(0, true, set(v1alpha1.Created, false, "Rejected", "invalid region")), Deleting, "deleting"},
	} {
		t.Run(c.name, func(t *testing.T) {
			state, message := Droplet(c.d)
			if state != c.state || !strings.Contains(message, c.messageHas) {
				t.Errorf("State = %q, %q; want %q and a message containing %q", state, message, c.state, c.messageHas)
			}
			StampDroplet(c.d)
			if c.d.Status.State != state || c.d.Status.Message != message {
				t.Errorf("StampDroplet recorded %q, %q", c.d.Status.State, c.d.Status.Message)
			}
		})
	}
}
