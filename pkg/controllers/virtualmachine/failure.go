package virtualmachine

import (
	"fmt"
	"slices"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/statecolumn"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
	"github.com/rancher/wrangler/v3/pkg/condition"
)

// VMStatusErrorDuringProvisioning is the VM status Gargantua (after v3.3.2)
// turns into an error its user sees, instead of an endless wait; older
// versions ignore it.
const VMStatusErrorDuringProvisioning hfv1.VmStatus = "errorduringprovisioning"

// DefaultConfigErrorGrace is how long an invalid config may wait for a fix
// before the VM is reported failed: long enough to fix a typo in the
// Environment, short enough that a user is not left waiting.
const DefaultConfigErrorGrace = 5 * time.Minute

// ReasonInvalidConfig is the Configured=False reason of an error in the
// config itself (a key missing or malformed), as opposed to a cache that
// could not answer (ConfigUnavailable).
const ReasonInvalidConfig = "InvalidConfig"

// refusedReasons are the Classify reasons of a DigitalOcean refusal (401,
// 403, 422 and other 4xx): nothing changes until someone acts. Every
// listed region sold out is one too: restocks take hours.
var refusedReasons = []string{"Unauthorized", "Rejected", v1alpha1.ReasonSoldOut}

// provisioningFailure says why vm cannot get a working droplet without an
// operator, or "" when nothing says so (yet). recheck is when a config
// error's grace period ends, for the caller to look again then.
func (h *handler) provisioningFailure(vm *hfv1.VirtualMachine, d *v1alpha1.Droplet) (why string, recheck time.Duration) {
	if d == nil || vm.Status.Status == hfv1.VmStatusRunning {
		// A running VM never turns failed: its user may be on it.
		return "", 0
	}
	if v1alpha1.Created.GetReason(d) == v1alpha1.ReasonClaimedDropletGone {
		// Found gone at the takeover or at the first read after it, which
		// may come once its ID is recorded: never replaced.
		return v1alpha1.Created.GetMessage(d), 0
	}
	if d.Status.DropletID != 0 {
		if reason := v1alpha1.Reachable.GetReason(d); v1alpha1.Reachable.IsFalse(d) && slices.Contains(statecolumn.FailedReachability, reason) {
			return v1alpha1.Reachable.GetMessage(d), 0
		}
		return "", 0
	}
	if v1alpha1.Configured.IsFalse(d) {
		if vm.Status.Status == VMStatusErrorDuringProvisioning {
			// Failed already: it stays failed until the config is fixed,
			// also across edits that leave it invalid and restarts that
			// forget the Environment check's verdicts.
			return "the DigitalOcean settings are still invalid: " + v1alpha1.Configured.GetMessage(d), 0
		}
		if why := h.invalidBeforeCreation(vm, d); why != "" {
			return why, 0
		}
		left := h.opts.ConfigErrorGrace - time.Since(since(d, v1alpha1.Configured))
		if left > 0 {
			return "", left
		}
		return fmt.Sprintf("the DigitalOcean settings are still invalid after %s: %s", h.opts.ConfigErrorGrace, v1alpha1.Configured.GetMessage(d)), 0
	}
	if refused(d, v1alpha1.Created) {
		return "DigitalOcean refused to create the droplet: " + v1alpha1.Created.GetMessage(d), 0
	}
	if k, err := h.keys.Cache().Get(vm.Namespace, firstKeyRef(d)); err == nil && refused(k, v1alpha1.Created) {
		return "DigitalOcean refused to register the SSH key: " + v1alpha1.Created.GetMessage(k), 0
	}
	return "", 0
}

// invalidBeforeCreation is the failure of a VM whose config the
// Environment check had held invalid since before the VM was created, or
// "". Nobody is fixing a config that was broken before the VM existed, so
// the user is told at once rather than after the grace, which is for a
// config an edit breaks while the VM waits. It counts only when the VM's
// Environment and template are the versions the check found invalid, and
// only for the config's own errors (InvalidConfig), not for a cache that
// could not answer.
func (h *handler) invalidBeforeCreation(vm *hfv1.VirtualMachine, d *v1alpha1.Droplet) string {
	if v1alpha1.Configured.GetReason(d) != ReasonInvalidConfig {
		return ""
	}
	env, err := h.envs.Get(vm.Namespace, vm.Status.EnvironmentId)
	if err != nil {
		return ""
	}
	vmt, err := h.templates.Get(vm.Namespace, vm.Spec.VirtualMachineTemplateId)
	if err != nil {
		return ""
	}
	// creationTimestamp is whole seconds, rounded down: a verdict before it
	// is before the VM existed. (The check runs on this controller's clock,
	// the timestamp on the API server's.)
	found, ok := h.verdicts.InvalidSince(env, vmt)
	if !ok || !found.Before(vm.CreationTimestamp.Time) {
		return ""
	}
	return fmt.Sprintf("Environment %q was already invalid for template %q when the VM was created (the Environment check has reported it since %s), "+
		"so the VM fails at once instead of waiting %s for a fix: %s",
		env.Name, vmt.Name, found.UTC().Format(time.RFC3339), h.opts.ConfigErrorGrace, v1alpha1.Configured.GetMessage(d))
}

func refused(obj interface{}, cond condition.Cond) bool {
	return cond.IsFalse(obj) && slices.Contains(refusedReasons, cond.GetReason(obj))
}

func firstKeyRef(d *v1alpha1.Droplet) string {
	if len(d.Spec.KeyRefs) == 0 {
		return d.Name
	}
	return d.Spec.KeyRefs[0]
}

// since is when cond last changed status (its last update where no
// transition time was recorded). Conditions are stamped to the second:
// counting from the end of that second never cuts a grace period short.
func since(obj interface{}, cond condition.Cond) time.Time {
	for _, ts := range []string{events.LastTransition(obj, cond), cond.GetLastUpdated(obj)} {
		if t, err := time.Parse(time.RFC3339, ts); err == nil {
			return t.Add(time.Second)
		}
	}
	return time.Now()
}
