package droplet

import (
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

func keyIn(state, message string) *v1alpha1.Key {
	return &v1alpha1.Key{Status: v1alpha1.KeyStatus{State: state, Message: message}}
}

func TestWaitingForKeyNamesOnlyAProblem(t *testing.T) {
	for _, k := range []*v1alpha1.Key{nil, {}, keyIn("Creating", "registering the SSH key in DigitalOcean")} {
		if got := waitingForKey("vm", k); got != `waiting for Key "vm" to be created in DigitalOcean` {
			t.Errorf("waitingForKey(%+v) = %q", k, got)
		}
	}
}
