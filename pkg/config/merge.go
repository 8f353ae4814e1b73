// Package config turns a VM's Environment and VirtualMachineTemplate into a
// validated DigitalOcean droplet configuration.
package config

import (
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
)

// Merge layers the settings exactly as Gargantua's util.GetVMConfig does, so
// that Gargantua and the provisioner agree on every key: the template's image,
// then its config_map, then environment_specifics, then template_mapping[template].
func Merge(env *hfv1.Environment, vmt *hfv1.VirtualMachineTemplate) map[string]string {
	merged := map[string]string{}
	if vmt.Spec.Image != "" {
		merged[KeyImage] = vmt.Spec.Image
	}
	for k, v := range vmt.Spec.ConfigMap {
		merged[k] = v
	}
	for k, v := range env.Spec.EnvironmentSpecifics {
		merged[k] = v
	}
	for k, v := range env.Spec.TemplateMapping[vmt.Name] {
		merged[k] = v
	}
	return merged
}
