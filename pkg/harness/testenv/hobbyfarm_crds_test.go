package testenv

import (
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

func TestHobbyFarmCRDSchemasAreStructuralAndPruning(t *testing.T) {
	crds := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, c := range HobbyFarmCRDs() {
		crds[c.Name] = c
	}
	for _, name := range []string{"virtualmachines.hobbyfarm.io", "environments.hobbyfarm.io", "virtualmachinetemplates.hobbyfarm.io",
		"virtualmachineclaims.hobbyfarm.io", "virtualmachinesets.hobbyfarm.io", "scheduledevents.hobbyfarm.io"} {
		c := crds[name]
		if c == nil {
			t.Fatalf("missing CRD %s", name)
		}
		if c.Spec.Scope != apiextensionsv1.NamespaceScoped || c.Spec.Group != "hobbyfarm.io" ||
			len(c.Spec.Versions) != 1 || c.Spec.Versions[0].Name != "v1" {
			t.Errorf("%s: want namespaced hobbyfarm.io/v1, got %s %s %+v", name, c.Spec.Scope, c.Spec.Group, c.Spec.Versions)
		}
		s := c.Spec.Versions[0].Schema.OpenAPIV3Schema
		var internal apiextensions.JSONSchemaProps
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(s, &internal, nil); err != nil {
			t.Fatal(err)
		}
		structural, err := structuralschema.NewStructural(&internal)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if errs := structuralschema.ValidateStructural(nil, structural); len(errs) > 0 {
			t.Errorf("%s: not structural: %v", name, errs.ToAggregate())
		}
		walkSchema(t, name, "", s)
	}

	// Gargantua writes the status of these three through the status subresource.
	for _, name := range []string{"virtualmachines.hobbyfarm.io", "virtualmachineclaims.hobbyfarm.io", "virtualmachinesets.hobbyfarm.io", "scheduledevents.hobbyfarm.io"} {
		v := crds[name].Spec.Versions[0]
		if v.Subresources == nil || v.Subresources.Status == nil {
			t.Errorf("%s must have the status subresource", name)
		}
		if _, ok := v.Schema.OpenAPIV3Schema.Properties["status"]; !ok {
			t.Errorf("%s schema has no status", name)
		}
	}
	env := crds["environments.hobbyfarm.io"].Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	mapping := env.Properties["template_mapping"]
	if mapping.AdditionalProperties == nil || mapping.AdditionalProperties.Schema == nil ||
		mapping.AdditionalProperties.Schema.AdditionalProperties == nil ||
		mapping.AdditionalProperties.Schema.AdditionalProperties.Schema.Type != "string" {
		t.Errorf("template_mapping must be map[string]map[string]string, got %+v", mapping)
	}
}

// walkSchema fails on anything that would keep unknown fields and on untyped maps.
func walkSchema(t *testing.T, crd, path string, s *apiextensionsv1.JSONSchemaProps) {
	t.Helper()
	if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields {
		t.Errorf("%s: %s preserves unknown fields", crd, path)
	}
	if s.Type == "object" && len(s.Properties) == 0 && path != "" &&
		(s.AdditionalProperties == nil || s.AdditionalProperties.Schema == nil) {
		t.Errorf("%s: %s is an object without properties or typed additionalProperties", crd, path)
	}
	for k, p := range s.Properties {
		walkSchema(t, crd, path+"."+k, &p)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		walkSchema(t, crd, path+"[*]", s.AdditionalProperties.Schema)
	}
	if s.Items != nil && s.Items.Schema != nil {
		walkSchema(t, crd, path+"[]", s.Items.Schema)
	}
}
