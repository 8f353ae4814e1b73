package alphatest

import (
	"slices"
	"testing"
)

// The alpha's CRDs: provisioning.hobbyfarm.io/v1alpha1 Droplet (short name
// drop) and Key, namespaced, a status subresource, a schema that keeps
// unknown fields at the root and the raw DigitalOcean objects whole; no
// printer columns and no categories.
func TestCRDsAreTheAlphas(t *testing.T) {
	crds := CRDs()
	want := map[string][]string{"droplets.provisioning.hobbyfarm.io": {"drop"}, "keys.provisioning.hobbyfarm.io": nil}
	if len(crds) != len(want) {
		t.Fatalf("%d CRDs", len(crds))
	}
	raw := map[string][2]string{"droplets": {"spec", "droplet"}, "keys": {"spec", "key"}}
	for _, crd := range crds {
		shortNames, ok := want[crd.Name]
		if !ok || !slices.Equal(crd.Spec.Names.ShortNames, shortNames) || crd.Spec.Group != "provisioning.hobbyfarm.io" ||
			crd.Spec.Scope != "Namespaced" || len(crd.Spec.Names.Categories) != 0 || crd.Spec.PreserveUnknownFields {
			t.Errorf("CRD %s: %+v", crd.Name, crd.Spec)
			continue
		}
		if len(crd.Spec.Versions) != 1 {
			t.Fatalf("%s versions %+v", crd.Name, crd.Spec.Versions)
		}
		v := crd.Spec.Versions[0]
		root := v.Schema.OpenAPIV3Schema
		if v.Name != "v1alpha1" || !v.Served || !v.Storage || v.Subresources == nil || v.Subresources.Status == nil ||
			len(v.AdditionalPrinterColumns) != 0 || root.XPreserveUnknownFields == nil || !*root.XPreserveUnknownFields {
			t.Errorf("%s version %+v", crd.Name, v)
		}
		path := raw[crd.Spec.Names.Plural]
		for _, part := range []string{"spec", "status"} {
			p := root.Properties[part].Properties[path[1]]
			if p.XPreserveUnknownFields == nil || !*p.XPreserveUnknownFields {
				t.Errorf("%s %s.%s is pruned", crd.Name, part, path[1])
			}
		}
	}
}
