package v1alpha1

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ForceReleaseAnnotation, set to "true" on a VirtualMachine, Droplet or Key
// that is being deleted, makes the provisioner release its finalizer without
// deleting anything in DigitalOcean, for when DigitalOcean cannot be made to
// (the token is revoked, the account is closed). On a VirtualMachine it is
// passed on to the VM's Droplet and Key. It is ignored on objects that are
// not being deleted. What it leaves behind may still bill; a Warning Event
// ForceReleased names it.
const ForceReleaseAnnotation = "provisioning.hobbyfarm.io/force-release"

// ForceReleased is the reason of the Warning Event a force release records.
const ForceReleased = "ForceReleased"

// ForceReleaseRequested reports whether obj is being deleted and carries
// ForceReleaseAnnotation set to true.
func ForceReleaseRequested(obj metav1.Object) bool {
	return obj.GetDeletionTimestamp() != nil && HasForceReleaseAnnotation(obj)
}

// HasForceReleaseAnnotation reports the annotation alone, deleted or not.
func HasForceReleaseAnnotation(obj metav1.Object) bool {
	return strings.EqualFold(strings.TrimSpace(obj.GetAnnotations()[ForceReleaseAnnotation]), "true")
}

// ReasonWaitingForKey is the Created reason of a Droplet whose Key has no
// DigitalOcean ID yet. It is only ever set before the first create.
const ReasonWaitingForKey = "WaitingForKey"

// ReasonWaitingForRoom is the Created reason of a Droplet whose creates so
// far were all held back by the controller's own rate limiter (never
// sent) or refused: DigitalOcean has nothing of it.
const ReasonWaitingForRoom = "WaitingForRoom"

// MayExistInDigitalOcean reports whether a create may have been sent for d:
// it has an ID, or a Created condition other than WaitingForKey or
// WaitingForRoom (the
// Droplet controller records one before every create). A placeholder never
// reaches DigitalOcean.
func MayExistInDigitalOcean(d *Droplet) bool {
	return d.Spec.Name != "" && !NeverSent(d)
}

// NeverSent: no create was ever sent for d.
func NeverSent(d *Droplet) bool {
	if d.Status.DropletID != 0 || d.Spec.AdoptedDropletID != 0 {
		return false
	}
	switch Created.GetReason(d) {
	case ReasonWaitingForKey, ReasonWaitingForRoom:
		return true
	}
	return Created.GetStatus(d) == ""
}

// EnvironmentAnnotation and TemplateAnnotation, on a VM's Droplet and Key,
// name the Environment (the VM's status.environment_id) and the template
// (its spec.vm_template_id) the object was made from: Events about a value
// DigitalOcean refused name where to fix it, and costs are counted by them.
const (
	EnvironmentAnnotation = "provisioning.hobbyfarm.io/environment"
	TemplateAnnotation    = "provisioning.hobbyfarm.io/template"
)
