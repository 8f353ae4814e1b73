package droplet

import (
	"fmt"
	"strconv"
	"strings"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
	corev1 "k8s.io/api/core/v1"
)

// forceRelease forgets a deleting Droplet without deleting its droplet in
// DigitalOcean, as v1alpha1.ForceReleaseAnnotation asks, and names on the
// Droplet and its VM what may be left behind and billing.
func (h *handler) forceRelease(d *v1alpha1.Droplet) {
	var ids []string
	if d.Status.DropletID != 0 {
		ids = append(ids, strconv.Itoa(d.Status.DropletID))
	}
	if id, ok := h.notes.createdID(d); ok && id != d.Status.DropletID {
		ids = append(ids, strconv.Itoa(id))
	}
	h.pass.Forget(d)

	what := "a droplet (no ID was recorded; a create may have been sent)"
	if len(ids) > 0 {
		what = "droplet " + strings.Join(ids, ", ")
	}
	find := "find it " + findHint(d)
	if isClaimed(d) {
		// Taken from a warm pool: it carries the pool's tags, not the VM's.
		find = "find it by its ID with `doctl compute droplet get`"
	}
	message := fmt.Sprintf("released by %s without deleting in DigitalOcean: %s may still exist and bill; "+
		"%s and delete it there", v1alpha1.ForceReleaseAnnotation, what, find)
	logFor(d).WithField("droplet", d.Status.DropletID).Warn(message)
	events.Record(h.recorder, corev1.EventTypeWarning, v1alpha1.ForceReleased, message, d, h.vmOf(d))
}

// findHint says how an operator finds what d's create may have made: by
// the tag it carried (status.createTag), or by its name among this
// installation's and namespace's droplets.
func findHint(d *v1alpha1.Droplet) string {
	if d.Status.CreateTag != "" {
		return fmt.Sprintf("with `doctl compute droplet list --tag-name %s`", d.Status.CreateTag)
	}
	return fmt.Sprintf("with `doctl compute droplet list %s` (ours carry the tags %s)", d.Spec.Name, strings.Join(digitalocean.PlaceTags(d.Spec.Tags), " and "))
}
