// Package finalizer names the finalizer wrangler's remove handler keeps on
// the objects it cleans up: "wrangler.cattle.io/" and the handler's name.
// That is why handler names are API: renaming one strands its finalizer
// on every object that has it, and those objects are never deleted.
package finalizer

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Of is the finalizer of wrangler's remove handler named handler (wrangler
// builds it the same way and does not export it).
func Of(handler string) string { return "wrangler.cattle.io/" + handler }

// Has reports that obj carries the finalizer of the remove handler named
// handler.
func Has(obj metav1.Object, handler string) bool {
	return slices.Contains(obj.GetFinalizers(), Of(handler))
}

// HandlerPrefix starts the name of every handler of this provisioner.
const HandlerPrefix = "hf-provisioner-digitalocean"

// Ours reports a finalizer that one of this provisioner's remove handlers
// keeps (and no one else's, Gargantua's finalizer.hobbyfarm.io/vmset least
// of all): what an uninstall releases once nothing is left to clean up.
func Ours(f string) bool { return strings.HasPrefix(f, Of(HandlerPrefix)) }
