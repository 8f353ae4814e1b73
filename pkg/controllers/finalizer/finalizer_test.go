package finalizer

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Objects already in clusters carry these exact names: they must not change.
func TestOfIsWranglersFinalizerName(t *testing.T) {
	if got := Of("hf-provisioner-digitalocean-vm-cleanup"); got != "wrangler.cattle.io/hf-provisioner-digitalocean-vm-cleanup" {
		t.Errorf("Of = %q", got)
	}
	obj := &metav1.ObjectMeta{Finalizers: []string{"other", "wrangler.cattle.io/h"}}
	if !Has(obj, "h") || Has(obj, "other") || Has(obj, "g") {
		t.Errorf("Has on %v: h %v, other %v, g %v", obj.Finalizers, Has(obj, "h"), Has(obj, "other"), Has(obj, "g"))
	}
}
