package crds

import (
	"github.com/rancher/wrangler/v3/pkg/schemas/openapi"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// The original alpha provisioner kept its droplet and key IDs inside raw
// DigitalOcean objects (spec.droplet, status.droplet, spec.key, status.key)
// under a schema that pruned nothing. Those subtrees stay unpruned here,
// marked deprecated, so that replacing the alpha's CRDs with these loses
// none of the records this controller takes the alpha's objects over by.
var alphaRecords = map[string][][]string{
	"Droplet": {{"spec", "droplet"}, {"status", "droplet"}},
	"Key":     {{"spec", "key"}, {"status", "key"}},
}

const alphaDescription = "Deprecated: the original alpha provisioner's record, kept as it wrote it."

// schemaOf is obj's schema with the alpha's records of kind kept whole.
func schemaOf(kind string, obj any) (*apiextv1.JSONSchemaProps, error) {
	schema, err := openapi.ToOpenAPIFromStruct(obj)
	if err != nil {
		return nil, err
	}
	for _, path := range alphaRecords[kind] {
		edit(schema, path, func(p *apiextv1.JSONSchemaProps) {
			preserve := true
			p.XPreserveUnknownFields = &preserve
			p.Description = alphaDescription
		})
	}
	if kind == "WarmPool" {
		// A pool's droplet template shares the Droplet's spec type; the
		// alpha's fields and an adopted ID mean nothing there.
		edit(schema, []string{"spec", "droplet"}, func(p *apiextv1.JSONSchemaProps) {
			for _, name := range []string{"adoptedDropletID", "droplet", "machine"} {
				delete(p.Properties, name)
			}
		})
	}
	return schema, nil
}

// edit applies f to the property at path (Properties holds values, so each
// level is written back).
func edit(s *apiextv1.JSONSchemaProps, path []string, f func(*apiextv1.JSONSchemaProps)) {
	if len(path) == 0 {
		f(s)
		return
	}
	child, ok := s.Properties[path[0]]
	if !ok {
		return
	}
	edit(&child, path[1:], f)
	s.Properties[path[0]] = child
}
