package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A VM whose token DigitalOcean refuses from the start never had anything
// made there: deleting it is immediate, with DigitalOcean still refusing.
func TestRefusedTokenVMIsReleasedAtOnce(t *testing.T) {
	w := newWorld(t, worldOptions{})
	const revoked = "dop_v1_revoked-from-the-start"
	if _, err := w.hf.Secrets.Create(gargantuasim.TokenSecret(w.ns, "revoked", revoked)); err != nil {
		t.Fatal(err)
	}
	env := w.standardEnv("env-revoked")
	w.setSpecifics(env.Name, map[string]string{"region": "nyc1", "token-secret": "revoked"})
	w.createVM("refused-401", env, "ubuntu")
	w.eventually(30*time.Second, "the Key's create refused and recorded as definitive", func() string {
		k, err := w.keys.Get(w.ns, "refused-401", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if msg := expectCondition(k, v1alpha1.Created, "Unauthorized", `in Secret "revoked" from Environment "env-revoked"`); msg != "" {
			return msg
		}
		if !k.Status.NotCreated {
			return "status.notCreated not set"
		}
		return ""
	})

	w.deleteVMWithin("refused-401", 5*time.Second)
	if n := len(w.do.Droplets(revoked)) + len(w.do.Keys(revoked)) + len(w.do.Droplets(testToken)) + len(w.do.Keys(testToken)); n != 0 {
		t.Errorf("%d droplets and keys at DigitalOcean, want 0", n)
	}
}

// A droplet create refused with 422 is definitive too, and its Event names
// the refused value and the Environment and template it came from. An
// unknown outcome (a 5xx) is not: that deletion still waits for
// DigitalOcean.
func TestRefusedCreateIsReleasedButUnknownOutcomeWaits(t *testing.T) {
	w := newWorld(t, worldOptions{})
	env := w.standardEnv("env-a")
	w.setSpecifics(env.Name, map[string]string{"region": "mars1", "token-secret": tokenSecret})
	w.createVM("refused-422", env, "ubuntu")
	w.eventually(30*time.Second, "the droplet's create refused and recorded as definitive", func() string {
		d := w.dropletOrEmpty("refused-422")
		if msg := expectCondition(d, v1alpha1.Created, "Rejected", "invalid region"); msg != "" {
			return msg
		}
		if !d.Status.NotCreated {
			return "status.notCreated not set"
		}
		return ""
	})
	const named = `DigitalOcean refused region "mars1" from Environment "env-a" (template "ubuntu"): You specified an invalid region for Droplet creation. ` +
		`Fix environment_specifics.region or template_mapping[ubuntu].region.`
	w.eventually(10*time.Second, "the VM's Event names the value, the Environment and the fix", func() string {
		if events := w.vmEvents("refused-422"); !hasEvent(events, "Warning Rejected: "+named) {
			return fmt.Sprintf("events %q", events)
		}
		return ""
	})

	// DigitalOcean now refuses every droplet call: the release needs none.
	w.do.SetFaults(refuseDroplets(http.StatusUnauthorized))
	w.deleteVMWithin("refused-422", 10*time.Second)

	// The droplet create of a second VM gets no answer it can trust.
	w.do.SetFaults(fakedo.Faults{})
	w.setSpecifics(env.Name, map[string]string{"region": "nyc1", "token-secret": tokenSecret})
	w.do.SetFaults(refuseDroplets(http.StatusBadGateway))
	w.createVM("unknown-5xx", env, "ubuntu")
	w.eventually(30*time.Second, "the unknown outcome recorded", func() string {
		d, err := w.droplets.Get(w.ns, "unknown-5xx", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if v1alpha1.Created.GetReason(d) != "CreateUnconfirmed" || d.Status.NotCreated {
			return fmt.Sprintf("Created reason %q, notCreated %v", v1alpha1.Created.GetReason(d), d.Status.NotCreated)
		}
		return ""
	})
	w.do.SetFaults(refuseDroplets(http.StatusUnauthorized))
	if err := w.hf.VMs.Delete(w.ns, "unknown-5xx", nil); err != nil {
		t.Fatal(err)
	}
	w.consistently(5*time.Second, "the unknown outcome's deletion waits for DigitalOcean", func() string {
		if _, err := w.hf.VMs.Get(w.ns, "unknown-5xx", metav1.GetOptions{}); err != nil {
			return "VM: " + err.Error()
		}
		if _, err := w.droplets.Get(w.ns, "unknown-5xx", metav1.GetOptions{}); err != nil {
			return "Droplet: " + err.Error()
		}
		return ""
	})
	if n := len(w.do.Droplets(testToken)); n != 0 {
		t.Errorf("%d droplets at DigitalOcean, want 0", n)
	}
}

// refuseDroplets answers every droplet call with status; keys still work.
func refuseDroplets(status int) fakedo.Faults {
	rule := fakedo.FaultRule{ErrorRate: 1, ErrorStatus: status}
	return fakedo.Faults{Rules: map[string]fakedo.FaultRule{
		fakedo.RouteCreateDroplets: rule, fakedo.RouteListDroplets: rule, fakedo.RouteGetDroplet: rule,
		fakedo.RouteDeleteDroplet: rule, fakedo.RouteDeleteDropletsByTag: rule,
	}}
}

// deleteVMWithin deletes a VM and fails unless it, its Droplet and its Key
// are gone within d.
func (w *world) deleteVMWithin(name string, d time.Duration) {
	w.t.Helper()
	if err := w.hf.VMs.Delete(w.ns, name, nil); err != nil {
		w.t.Fatal(err)
	}
	w.eventually(d, name+" released", func() string {
		if _, err := w.hf.VMs.Get(w.ns, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return "VM still there"
		}
		return w.present(name, false, false, false)
	})
}
