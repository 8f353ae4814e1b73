// Package finalizer names the finalizer wrangler's remove handler keeps on
// the objects it cleans up: "wrangler.cattle.io/" and the handler's name.
// That is why handler names are API: renaming one strands its finalizer
// on every object that has it, and those objects are never deleted.
package finalizer

import (
	"slices"

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
