package droplet

import (
	"fmt"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
)

// waitingForKey says why a create waits for the Key name (nil when not
// found), with the Key's state when that names a problem: the Droplet's
// MESSAGE then points at the cause.
func waitingForKey(name string, k *v1alpha1.Key) string {
	message := fmt.Sprintf("waiting for Key %q to be created in DigitalOcean", name)
	if k != nil && k.Status.State != "" && k.Status.State != v1alpha1.KeyStateCreating {
		message += fmt.Sprintf(" (the Key is %s: %s)", k.Status.State, k.Status.Message)
	}
	return message
}
