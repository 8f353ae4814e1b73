package finalizer_test

import (
	"strings"
	"testing"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/droplet"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/environment"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/finalizer"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/key"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/tokensecret"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/virtualmachine"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/warmpool"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
)

// Every handler's finalizer is ours, and nothing else is: an uninstall removes
// exactly these.
func TestOursIsEveryHandlersFinalizerAndNoOneElses(t *testing.T) {
	for _, h := range []string{
		droplet.HandlerName, finalizer.DropletCleanupHandler, key.HandlerName, finalizer.KeyCleanupHandler,
		virtualmachine.HandlerName, finalizer.VMCleanupHandler, virtualmachine.TaintedHandlerName,
		warmpool.HandlerName, warmpool.EnvironmentHandlerName, environment.HandlerName, tokensecret.HandlerName,
	} {
		if !strings.HasPrefix(h, finalizer.HandlerPrefix) || !finalizer.Ours(finalizer.Of(h)) {
			t.Errorf("handler %q: its finalizer %q is not Ours", h, finalizer.Of(h))
		}
	}
	for _, f := range []string{gargantuasim.VMSetFinalizer, "wrangler.cattle.io/other-controller", tokensecret.InUseFinalizer,
		"kubernetes", "foregroundDeletion"} {
		if finalizer.Ours(f) {
			t.Errorf("%q is Ours; it is not a finalizer of this provisioner's handlers", f)
		}
	}
}
