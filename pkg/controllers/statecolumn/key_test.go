package statecolumn

import (
	"strings"
	"testing"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
)

func testKey(id int, deleting bool, conds ...testutil.Condition) *v1alpha1.Key {
	k := &v1alpha1.Key{Status: v1alpha1.KeyStatus{KeyID: id}}
	testutil.InState(k, deleting, conds...)
	return k
}

var (
	registered = set(v1alpha1.Created, true, "Created", "SSH key 3 (aa:bb) registered")
	usable     = set(v1alpha1.Ready, true, "Created", "SSH key is registered in DigitalOcean")
)

func TestKey(t *testing.T) {
	for _, c := range []struct {
		name       string
		k          *v1alpha1.Key
		state      string
		messageHas string
	}{
		// Each condition failing.
		{"token revoked", testKey(0, false, set(v1alpha1.Created, false, "Unauthorized", "DigitalOcean rejected the API token")),
			"Unauthorized", "rejected the API token"},
		{"key pair missing", testKey(0, false, set(v1alpha1.Created, false, "KeyPairUnavailable", `key-pair Secret "vm-ssh"`)),
			"KeyPairUnavailable", "vm-ssh"},
		{"not usable", testKey(3, false, registered, set(v1alpha1.Ready, false, "NotFound", "gone")), "NotFound", "gone"},
		{"delete failing", testKey(3, true, registered, usable, set(v1alpha1.Deleting, false, "TokenUnavailable", "cannot delete the SSH key")),
			"TokenUnavailable", "cannot delete"},
		// The first failing condition wins.
		{"created before ready", testKey(0, false, set(v1alpha1.Ready, false, "NotFound", "x"),
			set(v1alpha1.Created, false, "RateLimited", "429")), "RateLimited", "429"},
		// Each stage.
		{"new", testKey(0, false), v1alpha1.KeyStateCreating, "registering"},
		{"active", testKey(3, false, registered, usable), v1alpha1.KeyStateActive, "SSH key 3"},
		{"deleting", testKey(3, true, registered, usable), Deleting, "deleting"},
		{"deleting what failed to register", testKey(0, true, set(v1alpha1.Created, false, "Unauthorized", "x")), Deleting, "deleting"},
	} {
		t.Run(c.name, func(t *testing.T) {
			state, message := Key(c.k)
			if state != c.state || !strings.Contains(message, c.messageHas) {
				t.Errorf("State = %q, %q; want %q and a message containing %q", state, message, c.state, c.messageHas)
			}
			StampKey(c.k)
			if c.k.Status.State != state || c.k.Status.Message != message {
				t.Errorf("StampKey recorded %q, %q", c.k.Status.State, c.k.Status.Message)
			}
		})
	}
}
