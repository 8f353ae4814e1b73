package testenv

import (
	"fmt"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/rancher/wrangler/v3/pkg/crd"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// HobbyFarmCRDs are the hobbyfarm.io/v1 CRDs this provisioner uses, and the claims and
// VM sets that own VMs in a real cluster (so the garbage collector acts on VMs as it
// would there), built like Gargantua builds them: namespaced, structural schemas
// generated from the Go types (so unknown fields, status included, are pruned), a
// status subresource where Gargantua has one, and the same printer columns.
func HobbyFarmCRDs() []*apiextensionsv1.CustomResourceDefinition {
	defs := []crd.CRD{
		crd.NamespacedType("VirtualMachine.hobbyfarm.io/v1").
			WithSchemaFromStruct(hfv1.VirtualMachine{}).
			WithStatus().
			WithColumn("Status", ".status.status").
			WithColumn("Allocated", ".status.allocated").
			WithColumn("PublicIP", ".status.public_ip").
			WithColumn("PrivateIP", ".status.private_ip"),
		crd.NamespacedType("Environment.hobbyfarm.io/v1").
			WithSchemaFromStruct(hfv1.Environment{}),
		crd.NamespacedType("VirtualMachineTemplate.hobbyfarm.io/v1").
			WithSchemaFromStruct(hfv1.VirtualMachineTemplate{}),
		crd.NamespacedType("VirtualMachineClaim.hobbyfarm.io/v1").
			WithSchemaFromStruct(hfv1.VirtualMachineClaim{}).
			WithStatus().
			WithColumn("BindMode", ".status.bind_mode").
			WithColumn("Bound", ".status.bound").
			WithColumn("Ready", ".status.ready"),
		crd.NamespacedType("VirtualMachineSet.hobbyfarm.io/v1").
			WithSchemaFromStruct(hfv1.VirtualMachineSet{}).
			WithStatus().
			WithColumn("Available", ".status.available").
			WithColumn("Provisioned", ".status.provisioned"),
		// Its active events keep warm pools up.
		crd.NamespacedType("ScheduledEvent.hobbyfarm.io/v1").
			WithSchemaFromStruct(hfv1.ScheduledEvent{}).
			WithStatus().
			WithColumn("AccessCode", ".spec.access_code").
			WithColumn("Active", ".status.active").
			WithColumn("Finished", ".status.finished"),
	}
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(defs))
	for _, d := range defs {
		c, err := toTypedCRD(d)
		if err != nil {
			// The inputs are fixed Go types: failing here is a programming error.
			panic(fmt.Sprintf("testenv: build CRD %s: %v", d.Name(), err))
		}
		out = append(out, c)
	}
	return out
}

func toTypedCRD(d crd.CRD) (*apiextensionsv1.CustomResourceDefinition, error) {
	obj, err := d.ToCustomResourceDefinition()
	if err != nil {
		return nil, err
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("unexpected %T from wrangler", obj)
	}
	var c apiextensionsv1.CustomResourceDefinition
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &c); err != nil {
		return nil, err
	}
	for i := range c.Spec.Versions {
		if s := c.Spec.Versions[i].Schema; s != nil && s.OpenAPIV3Schema != nil {
			requirePruning(s.OpenAPIV3Schema)
		}
	}
	return &c, nil
}

// requirePruning makes sure wrangler's schema prunes unknown fields: spec and status must
// not preserve them (a controller writing a misspelt status field should see it vanish,
// as on a Gargantua cluster), and free-form maps get string values, as HobbyFarm's maps have.
func requirePruning(s *apiextensionsv1.JSONSchemaProps) {
	for _, name := range []string{"spec", "status"} {
		if p, ok := s.Properties[name]; ok {
			p.XPreserveUnknownFields = nil
			s.Properties[name] = p
		}
	}
	typeMaps(s)
}

func typeMaps(s *apiextensionsv1.JSONSchemaProps) {
	if s.Type == "object" && len(s.Properties) == 0 && s.AdditionalProperties == nil &&
		s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields {
		s.XPreserveUnknownFields = nil
		s.AdditionalProperties = &apiextensionsv1.JSONSchemaPropsOrBool{
			Allows: true,
			Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"},
		}
	}
	for k, p := range s.Properties {
		typeMaps(&p)
		s.Properties[k] = p
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		typeMaps(s.AdditionalProperties.Schema)
	}
	if s.Items != nil && s.Items.Schema != nil {
		typeMaps(s.Items.Schema)
	}
}
