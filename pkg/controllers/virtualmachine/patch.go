package virtualmachine

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	"github.com/rancher/wrangler/v3/pkg/condition"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// patchVM writes only the VM fields this provisioner owns, as merge patches:
// Gargantua rewrites the rest of the status itself.
func (h *handler) patchVM(vm *hfv1.VirtualMachine, secretName string, cfg *config.Droplet, d *v1alpha1.Droplet) error {
	if h.writtenPast(vm) {
		// This copy predates a patch of ours that the cache has not caught
		// up with: patching from it would repeat that request and its
		// Event. The patched VM's watch event runs this handler again.
		return nil
	}
	p := vmPatcher{h: h, vm: vm}
	defer p.remember()
	if spec := ownSpec(vm, secretName, cfg); len(spec) > 0 {
		if err := p.patch(map[string]interface{}{"spec": spec}); err != nil {
			return err
		}
	}
	failure, recheck := h.provisioningFailure(vm, d)
	if recheck > 0 {
		h.vms.EnqueueAfter(vm.Namespace, vm.Name, recheck)
	}
	status, labels := desiredStatus(vm, d, failure)
	// The status first: it is what users and Gargantua wait for.
	if len(status) > 0 {
		if err := p.patch(map[string]interface{}{"status": status}, "status"); err != nil {
			return err
		}
		h.announce(vm, d, status, failure)
	}
	if len(labels) > 0 {
		return p.patch(map[string]interface{}{"metadata": map[string]interface{}{"labels": labels}})
	}
	return nil
}

// writtenPast reports that vm is a copy this handler patched, or one of the
// copies its patches made on the way to the last.
func (h *handler) writtenPast(vm *hfv1.VirtualMachine) bool {
	past, ok := h.patchedFrom.Load(vm.UID)
	return ok && slices.Contains(past.([]string), vm.ResourceVersion)
}

// vmPatcher sends one pass's patches of a VM and notes the resourceVersions
// they leave behind.
type vmPatcher struct {
	h  *handler
	vm *hfv1.VirtualMachine
	// past are the resourceVersions patched from, oldest first.
	past []string
	last string
}

func (p *vmPatcher) patch(body map[string]interface{}, subresources ...string) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	patched, err := p.h.vms.Patch(p.vm.Namespace, p.vm.Name, types.MergePatchType, data, subresources...)
	if err != nil {
		return err
	}
	if p.last == "" {
		p.last = p.vm.ResourceVersion
	}
	p.past = append(p.past, p.last)
	p.last = patched.ResourceVersion
	return nil
}

// remember keeps the copies this pass wrote past; the newest one is not
// among them, since it is what the next pass should act on.
func (p *vmPatcher) remember() { p.h.notePatchedFrom(p.vm.UID, p.past...) }

// keptPatchedFrom bounds the resourceVersions kept per VM: a watch lags by a
// few writes at most.
const keptPatchedFrom = 8

func (h *handler) notePatchedFrom(uid types.UID, rvs ...string) {
	if len(rvs) == 0 {
		return
	}
	var past []string
	if v, ok := h.patchedFrom.Load(uid); ok {
		past = v.([]string)
	}
	past = append(slices.Clone(past), rvs...)
	h.patchedFrom.Store(uid, past[max(0, len(past)-keptPatchedFrom):])
}

// ownSpec returns the spec fields this provisioner sets that vm lacks, as
// a merge patch's "spec".
func ownSpec(vm *hfv1.VirtualMachine, secretName string, cfg *config.Droplet) map[string]interface{} {
	spec := map[string]interface{}{}
	if vm.Spec.SecretName != secretName {
		spec["secret_name"] = secretName
	}
	if vm.Spec.SshUsername == "" {
		username := config.DefaultSSHUsername
		if cfg != nil {
			username = cfg.SSHUsername
		}
		spec["ssh_username"] = username
	}
	return spec
}

// updateWithOwnSpec is the write of wrangler's remove handler, which adds
// and removes the cleanup finalizer. Adding it is this controller's first
// write to a new VM, so it sets the VM's own spec fields too, which saves
// a request per VM in a flood. It is a merge patch conditional on the
// resourceVersion, so it fails on a stale copy as an update would.
func (h *handler) updateWithOwnSpec(obj runtime.Object) (runtime.Object, error) {
	vm, ok := obj.(*hfv1.VirtualMachine)
	if !ok {
		return h.vms.Updater()(obj)
	}
	body := map[string]interface{}{"metadata": map[string]interface{}{
		"finalizers": vm.Finalizers, "resourceVersion": vm.ResourceVersion}}
	if vm.DeletionTimestamp == nil {
		cfg, _, _ := h.resolve(vm)
		existing, _ := h.droplets.Cache().Get(vm.Namespace, vm.Name)
		secret := secretNameFor(vm, usesSharedKey(vm, cfg, existing))
		if a := h.alphaOf(vm); takesOver(a, existing) {
			secret = a.secret
		}
		if spec := ownSpec(vm, secret, cfg); len(spec) > 0 {
			body["spec"] = spec
		}
	}
	data, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	patched, err := h.vms.Patch(vm.Namespace, vm.Name, types.MergePatchType, data)
	if err == nil {
		h.notePatchedFrom(vm.UID, vm.ResourceVersion)
	}
	return patched, err
}

// desiredStatus is what the droplet, and failure (see provisioningFailure),
// say the VM's own fields should be; only differing fields are returned.
func desiredStatus(vm *hfv1.VirtualMachine, d *v1alpha1.Droplet, failure string) (status map[string]interface{}, labels map[string]string) {
	status = map[string]interface{}{}
	labels = map[string]string{}
	want := vm.Status.Status
	switch {
	case failure != "":
		want = VMStatusErrorDuringProvisioning
	case d == nil || d.Status.DropletID == 0:
		if vm.Status.Status == VMStatusErrorDuringProvisioning {
			// The cause was fixed before any droplet: provisioning resumes.
			want = hfv1.VmStatusRFP
		}
	case (v1alpha1.Ready.IsTrue(d) && v1alpha1.Reachable.IsTrue(d)) || vm.Status.Status == hfv1.VmStatusRunning:
		want = hfv1.VmStatusRunning
	default:
		want = hfv1.VmStatusProvisioned
	}
	if vm.Status.Status != want {
		status["status"] = want
	}
	if want == hfv1.VmStatusRunning && d != nil {
		// (A running VM whose Droplet is gone, e.g. while its namespace is
		// deleted, keeps its addresses.)
		for field, pair := range map[string][2]string{
			"public_ip":  {vm.Status.PublicIP, d.Status.PublicIPv4},
			"private_ip": {vm.Status.PrivateIP, d.Status.PrivateIPv4},
			"hostname":   {vm.Status.Hostname, d.Spec.Name},
		} {
			if pair[1] != "" && pair[0] != pair[1] {
				status[field] = pair[1]
			}
		}
		if vm.Labels[readyLabel] != "true" && !vm.Status.Tainted { // a tainted VM is on its way out
			labels[readyLabel] = "true"
		}
	}
	return status, labels
}

// announce records the VM's progress. These Events are the only ones for
// a droplet's creation and first boot: the Droplet leaves them to the VM.
func (h *handler) announce(vm *hfv1.VirtualMachine, d *v1alpha1.Droplet, status map[string]interface{}, failure string) {
	s, ok := status["status"]
	if !ok {
		return
	}
	log := logrus.WithField("vm", vm.Name)
	switch s {
	case VMStatusErrorDuringProvisioning:
		log.Warn("VM cannot be provisioned: " + failure)
		h.recorder.Event(vm, corev1.EventTypeWarning, "ProvisioningFailed", failure)
		return
	case hfv1.VmStatusRFP:
		log.Info("the cause of the provisioning failure is gone; provisioning resumes")
		h.recorder.Event(vm, corev1.EventTypeNormal, "ProvisioningResumed", "the cause of the provisioning failure is gone; provisioning resumes")
		return
	}
	log = log.WithField("droplet", d.Status.DropletID)
	switch s {
	case hfv1.VmStatusProvisioned:
		h.announceProvisioned(vm, d, log)
	case hfv1.VmStatusRunning:
		if was := vm.Status.Status; was != hfv1.VmStatusProvisioned && was != hfv1.VmStatusRunning {
			// The first look at the droplet found it running already (a
			// busy queue, a fast boot): its creation still gets its Event.
			h.announceProvisioned(vm, d, log)
		}
		log.WithField("public_ip", d.Status.PublicIPv4).Info("VM running")
		metrics.ProvisioningSeconds.Observe(time.Since(vm.CreationTimestamp.Time).Seconds())
		h.recorder.Eventf(vm, corev1.EventTypeNormal, "Running", "droplet %d is active at %s; %s", d.Status.DropletID, d.Status.PublicIPv4, v1alpha1.Reachable.GetMessage(d))
	}
}

func (h *handler) announceProvisioned(vm *hfv1.VirtualMachine, d *v1alpha1.Droplet, log *logrus.Entry) {
	region := cmp.Or(d.Status.Region, d.Spec.Region)
	if d.Spec.ClaimedDropletID != 0 {
		log.Info("droplet taken from a warm pool; VM provisioned")
		h.recorder.Eventf(vm, corev1.EventTypeNormal, "Provisioned", "DigitalOcean droplet %d taken from a warm pool in %s", d.Status.DropletID, region)
		return
	}
	log.Info("droplet created; VM provisioned")
	h.recorder.Eventf(vm, corev1.EventTypeNormal, "Provisioned", "DigitalOcean droplet %d created in %s", d.Status.DropletID, region)
	if listed := d.Spec.Regions(); len(listed) > 1 && d.Status.Region != "" && d.Status.Region != listed[0] {
		// The Created message names the regions passed over and why.
		log.WithField("region", d.Status.Region).Info("droplet created in a fallback region")
		h.recorder.Eventf(vm, corev1.EventTypeNormal, ReasonRegionFallback, "%s", v1alpha1.Created.GetMessage(d))
	}
}

// ReasonRegionFallback: a VM's droplet went to a region listed after the
// first, which could not take it.
const ReasonRegionFallback = "RegionFallback"

func (h *handler) transition(status interface{}, cond condition.Cond, ok bool, reason, message string, objs ...runtime.Object) bool {
	return events.Transition(h.recorder, status, cond, ok, reason, message, objs...)
}
