package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/rancher/wrangler/v3/pkg/condition"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var validSpecifics = map[string]string{"region": "nyc1", "token-secret": tokenSecret}
var validMapping = map[string]map[string]string{"ubuntu": {"size": "s-1vcpu-1gb"}}

func with(base map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(out, kv[i])
		} else {
			out[kv[i]] = kv[i+1]
		}
	}
	return out
}

// createUbuntuTemplate makes the template "ubuntu" the cases' VMs use.
func (w *world) createUbuntuTemplate() {
	w.t.Helper()
	if _, err := w.hf.Templates.Create(gargantuasim.Template(w.ns, "ubuntu", "ubuntu-22-04-x64", nil)); err != nil {
		w.t.Fatal(err)
	}
}

// caseEnvironment is a case's Environment, not created yet: the valid
// specifics and mapping where the case gives none.
func (w *world) caseEnvironment(name string, specifics map[string]string, mapping map[string]map[string]string) *hfv1.Environment {
	if specifics == nil {
		specifics = with(validSpecifics)
	}
	if mapping == nil {
		mapping = validMapping
	}
	return gargantuasim.Environment(w.ns, name, specifics, mapping)
}

type badInput struct {
	name      string
	specifics map[string]string
	mapping   map[string]map[string]string
	// on is "droplet" or "key": which object carries the condition.
	on       string
	cond     condition.Cond
	reason   string
	contains string
	// doWrites is whether DigitalOcean is asked to create anything (it refuses).
	doWrites bool
	setup    func(w *world)
}

// badInputCases is the table of bad input, shared by the tests that show
// how each case is reported.
func badInputCases() []badInput {
	return []badInput{
		{name: "missing-region", specifics: with(validSpecifics, "region", ""), contains: `"region": is missing`},
		{name: "missing-size", mapping: map[string]map[string]string{"ubuntu": {}}, contains: `"size": is missing`},
		{name: "missing-image", setup: func(w *world) {
			if _, err := w.hf.Templates.Create(gargantuasim.Template(w.ns, "bare", "", nil)); err != nil {
				w.t.Fatal(err)
			}
		}, mapping: map[string]map[string]string{"ubuntu": {"size": "s-1vcpu-1gb"}, "bare": {"size": "s-1vcpu-1gb"}}, contains: `"image": is missing`},
		{name: "both-tokens", specifics: with(validSpecifics, "token", "dop_v1_x"), contains: "both token and token-secret"},
		{name: "no-token", specifics: with(validSpecifics, "token-secret", ""), contains: "neither token nor token-secret"},
		{name: "missing-token-secret", specifics: with(validSpecifics, "token-secret", "nope"), contains: `Secret "nope" named by token-secret does not exist`},
		{name: "token-secret-without-token", specifics: with(validSpecifics, "token-secret", "empty-secret"), setup: func(w *world) {
			s := gargantuasim.TokenSecret(w.ns, "empty-secret", "")
			s.Data = map[string][]byte{"other": []byte("x")}
			if _, err := w.hf.Secrets.Create(s); err != nil {
				w.t.Fatal(err)
			}
		}, contains: `Secret "empty-secret" has no key "token"`},
		{name: "non-boolean", specifics: with(validSpecifics, "backups", "yes"), contains: `"backups": "yes" is not a boolean`},
		{name: "user-data-too-big", specifics: with(validSpecifics, "user_data", strings.Repeat("x", 64*1024+1)), contains: `"user_data": is 65537 bytes`},
		{name: "no-template-mapping", mapping: map[string]map[string]string{"other": {"size": "s-1vcpu-1gb"}}, contains: `no template_mapping entry for template "ubuntu"`},
		{name: "no-environment", contains: `"status.environment_id": Environment "no-environment-env" does not exist`},
		{name: "malformed-slug", specifics: with(validSpecifics, "region", "NYC1"), contains: `"region": "NYC1" is not a DigitalOcean region slug; slugs are lowercase: set it to "nyc1"`},
		{name: "bad-ssh-key-type", specifics: with(validSpecifics, "ssh_key_type", "dsa"), contains: `"ssh_key_type": "dsa" is not a supported SSH key type`},
		{name: "rejected-slug", specifics: with(validSpecifics, "region", "xx9"), cond: v1alpha1.Created, reason: "Rejected",
			contains: "You specified an invalid region for Droplet creation.", doWrites: true},
		{name: "bad-token", specifics: with(validSpecifics, "token-secret", "bad-token"), setup: func(w *world) {
			if _, err := w.hf.Secrets.Create(gargantuasim.TokenSecret(w.ns, "bad-token", "dop_v1_revoked")); err != nil {
				w.t.Fatal(err)
			}
		}, on: "key", cond: v1alpha1.Created, reason: "Unauthorized", contains: "DigitalOcean rejected the API token"},
	}
}

// failing is the condition and reason that report c: a config error by default.
func (c badInput) failing() (condition.Cond, string) {
	if c.cond == "" {
		return v1alpha1.Configured, "InvalidConfig"
	}
	return c.cond, c.reason
}

func TestBadInputIsReportedAndRecovers(t *testing.T) {
	for _, c := range badInputCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			runBadInput(t, c)
		})
	}
}

func runBadInput(t *testing.T, c badInput) {
	w, envName := startBadInput(t, c)
	c.cond, c.reason = c.failing()
	w.eventually(30*time.Second, "condition "+string(c.cond), func() string {
		var obj interface{}
		if c.on == "key" {
			k, err := w.keys.Get(w.ns, "bad", metav1.GetOptions{})
			if err != nil {
				return err.Error()
			}
			obj = k
		} else {
			d, err := w.droplets.Get(w.ns, "bad", metav1.GetOptions{})
			if err != nil {
				return err.Error()
			}
			obj = d
		}
		if !c.cond.IsFalse(obj) || c.cond.GetReason(obj) != c.reason || !strings.Contains(c.cond.GetMessage(obj), c.contains) {
			return fmt.Sprintf("%s=%s reason %q message %q", c.cond, c.cond.GetStatus(obj), c.cond.GetReason(obj), c.cond.GetMessage(obj))
		}
		return ""
	})
	w.eventually(10*time.Second, "warning Event on the VM", func() string {
		events := w.vmEvents("bad")
		if !hasEvent(events, "Warning "+c.reason+": ") || !hasEvent(events, c.contains) {
			return fmt.Sprintf("events %q", events)
		}
		return ""
	})
	if posts := w.do.RequestCounts()["POST /v2/droplets 202"]; posts != 0 {
		t.Errorf("%d droplets created for bad input", posts)
	}
	if !c.doWrites && len(w.do.Droplets(testToken))+len(w.do.Keys(testToken)) > 0 {
		t.Errorf("DigitalOcean objects created for bad input")
	}
	// A config error waits for its grace period, unless the Environment
	// check reported it before the VM was created (the Environment is made
	// just before the VM, so either may happen); DigitalOcean's refusal
	// needs someone to act, and the user is told at once.
	w.eventually(10*time.Second, "VM status", func() string {
		s := w.vm("bad").Status.Status
		switch {
		case c.cond == v1alpha1.Created && s == errorStatus:
		case c.cond == v1alpha1.Configured && s == hfv1.VmStatusRFP:
		case c.cond == v1alpha1.Configured && s == errorStatus && hasEvent(w.vmEvents("bad"), alreadyInvalid):
		default:
			return fmt.Sprintf("VM status %q, events %q", s, w.vmEvents("bad"))
		}
		return ""
	})

	// Fixing the Environment provisions the VM.
	fixed := gargantuasim.Environment(w.ns, envName, validSpecifics, map[string]map[string]string{
		"ubuntu": {"size": "s-1vcpu-1gb"}, "bare": {"size": "s-1vcpu-1gb", "image": "ubuntu-22-04-x64"}})
	if c.name == "no-environment" {
		w.createEnv(fixed)
	} else {
		current, err := w.hf.Envs.Get(w.ns, envName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		current.Spec = fixed.Spec
		if _, err := w.hf.Envs.Update(current); err != nil {
			t.Fatal(err)
		}
	}
	w.waitRunning("bad")
}

// startBadInput makes c's Environment and the VM "bad" from it.
func startBadInput(t *testing.T, c badInput) (*world, string) {
	w := newWorld(t, worldOptions{})
	w.createUbuntuTemplate()
	if c.setup != nil {
		c.setup(w)
	}
	envName := c.name + "-env"
	env := w.caseEnvironment(envName, c.specifics, c.mapping)
	if c.name != "no-environment" {
		env = w.createEnv(env)
	}
	template := "ubuntu"
	if c.name == "missing-image" {
		template = "bare"
	}
	w.createVM("bad", env, template)
	return w, envName
}
