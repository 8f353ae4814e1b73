package key

import (
	"strings"
	"testing"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
)

// set makes one condition of a test Key.
var set = testutil.Cond

func testKey(id int, deleting bool, conds ...testutil.Condition) *v1alpha1.Key {
	k := &v1alpha1.Key{Status: v1alpha1.KeyStatus{KeyID: id}}
	testutil.InState(k, deleting, conds...)
	return k
}

var (
	registered = set(v1alpha1.Created, true, "Created", "SSH key 3 (aa:bb) registered")
	usable     = set(v1alpha1.Ready, true, "Created", "SSH key is registered in DigitalOcean")
)

func TestState(t *testing.T) {
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
		{"new", testKey(0, false), StateCreating, "registering"},
		{"active", testKey(3, false, registered, usable), StateActive, "SSH key 3"},
		{"deleting", testKey(3, true, registered, usable), StateDeleting, "deleting"},
		{"deleting what failed to register", testKey(0, true, set(v1alpha1.Created, false, "Unauthorized", "x")), StateDeleting, "deleting"},
	} {
		t.Run(c.name, func(t *testing.T) {
			state, message := State(c.k)
			if state != c.state || !strings.Contains(message, c.messageHas) {
				t.Errorf("State = %q, %q; want %q and a message containing %q", state, message, c.state, c.messageHas)
			}
			StampState(c.k)
			if c.k.Status.State != state || c.k.Status.Message != message {
				t.Errorf("StampState recorded %q, %q", c.k.Status.State, c.k.Status.Message)
			}
		})
	}
}
