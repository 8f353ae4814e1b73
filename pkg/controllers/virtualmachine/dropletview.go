package virtualmachine

import (
	"slices"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/statecolumn"
	"github.com/rancher/wrangler/v3/pkg/genericcondition"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// dropletView is what of a Droplet the VM's handlers act on. A Droplet
// write that leaves it unchanged does not re-run them: a droplet's way to
// running takes about five status writes, and in a flood each pass of a
// thousand VMs' handlers waits behind the others.
type dropletView struct {
	Labels, Annotations map[string]string
	Owners              []metav1.OwnerReference
	Finalizers          []string
	Deleting            bool
	Spec                v1alpha1.DropletSpec
	Status              v1alpha1.DropletStatus
	// Running is Ready and Reachable both true: what turns the VM running.
	Running bool
}

// viewOfDroplet is the dropletView of obj, or nil for anything else.
func viewOfDroplet(obj any) any {
	d, ok := obj.(*v1alpha1.Droplet)
	if !ok || d == nil {
		return nil
	}
	status := v1alpha1.DropletStatus{
		DropletID:   d.Status.DropletID,
		PublicIPv4:  d.Status.PublicIPv4,
		PrivateIPv4: d.Status.PrivateIPv4,
		PriceHourly: d.Status.PriceHourly,
		NotCreated:  d.Status.NotCreated,
		Claim:       d.Status.Claim,
	}
	for _, c := range d.Status.Conditions {
		if !quietToVM(c) {
			status.Conditions = append(status.Conditions, genericcondition.GenericCondition{
				Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message})
		}
	}
	return dropletView{
		Labels: d.Labels, Annotations: d.Annotations, Owners: d.OwnerReferences, Finalizers: d.Finalizers,
		Deleting: d.DeletionTimestamp != nil, Spec: d.Spec, Status: status,
		Running: v1alpha1.Ready.IsTrue(d) && v1alpha1.Reachable.IsTrue(d),
	}
}

// quietToVM: the VM acts on c no differently than on its absence.
//   - Ready counts only together with Reachable (Running).
//   - A create on its way (recorded before it is sent, going to the next
//     listed region, or waiting for room or a Key) is no failure; the VM
//     reports only refusals.
//   - A login that fails while the droplet comes up, with a message that
//     changes each attempt, is no failure until it is one of
//     statecolumn.FailedReachability.
func quietToVM(c genericcondition.GenericCondition) bool {
	switch c.Type {
	case string(v1alpha1.Ready):
		return true
	case string(v1alpha1.Created):
		return c.Status == "False" && slices.Contains(createOnItsWay, c.Reason)
	case string(v1alpha1.Reachable):
		return c.Status == "False" && !slices.Contains(statecolumn.FailedReachability, c.Reason)
	}
	return false
}

var createOnItsWay = []string{v1alpha1.ReasonCreating, v1alpha1.ReasonNextRegion, v1alpha1.ReasonWaitingForRoom, v1alpha1.ReasonWaitingForKey}
