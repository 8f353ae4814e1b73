package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/virtualmachine"
)

// alreadyInvalid is in the ProvisioningFailed Event of a VM created for a
// config the Environment check had found invalid.
const alreadyInvalid = "was already invalid for template"

// longGrace is a --config-error-grace no test waits out.
const longGrace = 10 * time.Minute

// A VM created for a config the Environment check has reported invalid
// fails at once, with what is wrong and the fix; fixing the Environment
// resumes it.
func TestVMOfAnInvalidEnvironmentFailsAtOnce(t *testing.T) {
	w := newWorld(t, worldOptions{configErrorGrace: longGrace})
	env := w.standardEnv("env")
	w.setSpecifics(env.Name, map[string]string{"region": "Mars 1", "token-secret": tokenSecret})
	w.createVMAfterReport("vm-1", env.Name, "ubuntu", "Warning InvalidConfig: environment_specifics.region")

	w.eventually(30*time.Second, "errorduringprovisioning within seconds, far within the grace", w.statusIs("vm-1", errorStatus))
	w.eventually(10*time.Second, "the Event says why, and that it failed at once", func() string {
		for _, e := range w.vmEvents("vm-1") {
			if strings.HasPrefix(e, "Warning ProvisioningFailed: ") && strings.Contains(e, alreadyInvalid) &&
				strings.Contains(e, `config key "region"`) && strings.Contains(e, "fails at once") {
				return ""
			}
		}
		return fmt.Sprintf("events %q", w.vmEvents("vm-1"))
	})

	w.setSpecifics(env.Name, map[string]string{"region": "nyc1", "token-secret": tokenSecret})
	w.waitRunning("vm-1")
	if !hasEvent(w.vmEvents("vm-1"), "ProvisioningResumed") {
		t.Errorf("VM events %q lack ProvisioningResumed", w.vmEvents("vm-1"))
	}
}

// A VM that waits while an edit makes the config invalid keeps the grace,
// though a VM created after the same edit fails at once.
func TestEditBreakingTheConfigOfAWaitingVMKeepsTheGrace(t *testing.T) {
	w := newWorld(t, worldOptions{configErrorGrace: longGrace})
	env := w.envWithoutUbuntu("env")
	w.createVM("waiting", env, "ubuntu")
	w.eventually(30*time.Second, "the VM waits for a mapping of its template", w.configuredFalseWith("waiting", `no template_mapping entry for template "ubuntu"`))

	w.mapUbuntu(env.Name, map[string]string{"size": "s-1vcpu-1gb", "region": "Mars 1"})
	w.createVMAfterReport("after", env.Name, "ubuntu", "Warning InvalidConfig: template_mapping[ubuntu].region")
	w.eventually(30*time.Second, "the VM created after the edit fails at once", w.statusIs("after", errorStatus))

	w.eventually(30*time.Second, "the waiting VM sees the edited config", w.configuredFalseWith("waiting", `config key "region"`))
	w.vmHandledAgain("waiting")
	if s := w.vm("waiting").Status.Status; s != hfv1.VmStatusRFP {
		t.Errorf("the VM that existed before the edit is %q, want %q for the rest of its grace; events %q", s, hfv1.VmStatusRFP, w.vmEvents("waiting"))
	}
}

// envWithoutUbuntu is a valid Environment that serves only the template
// debian: a VM of template ubuntu waits for a mapping.
func (w *world) envWithoutUbuntu(name string) *hfv1.Environment {
	w.t.Helper()
	w.standardEnv(name)
	return w.editEnv(name, func(env *hfv1.Environment) { delete(env.Spec.TemplateMapping, "ubuntu") })
}

// mapUbuntu sets the Environment's mapping of the template ubuntu.
func (w *world) mapUbuntu(envName string, mapping map[string]string) {
	w.t.Helper()
	w.editEnv(envName, func(env *hfv1.Environment) { env.Spec.TemplateMapping["ubuntu"] = mapping })
}

// createVMAfterReport creates the VM once the Environment check has
// reported an Event holding every part, in a later second: the VM's
// creationTimestamp is whole seconds, and only a report before it counts.
func (w *world) createVMAfterReport(name, envName, template string, parts ...string) {
	w.t.Helper()
	w.eventually(30*time.Second, "the Environment check's report", func() string { return w.envEventWith(envName, parts...) })
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	w.createVM(name, w.env(envName), template)
}

// statusIs is "" once the VM's status is want.
func (w *world) statusIs(name string, want hfv1.VmStatus) func() string {
	return func() string {
		if s := w.vm(name).Status.Status; s != want {
			return fmt.Sprintf("status %q", s)
		}
		return ""
	}
}

// configuredFalseWith is "" once the VM's Droplet reports an invalid
// config whose message holds part.
func (w *world) configuredFalseWith(name, part string) func() string {
	return func() string {
		return expectCondition(w.dropletOrEmpty(name), v1alpha1.Configured, virtualmachine.ReasonInvalidConfig, part)
	}
}

// vmHandledAgain returns once the VM's handler has finished a pass that
// began after the call: a pass writes the VM's status first and then
// applies its objects, which copy the VM's scheduled-event label, here
// set to a new value, onto its Droplet.
func (w *world) vmHandledAgain(name string) {
	w.t.Helper()
	mark := fmt.Sprintf("pass-%d", time.Now().UnixNano())
	w.labelVM(name, v1alpha1.ScheduledEventLabel, mark)
	w.eventually(30*time.Second, "a pass of "+name+" after now", func() string {
		if got := w.droplet(name).Labels[v1alpha1.ScheduledEventLabel]; got != mark {
			return fmt.Sprintf("Droplet label %q", got)
		}
		return ""
	})
}
