package gargantuasim

import (
	"maps"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
)

// vmConfig merges a VM's config as Gargantua's util.GetVMConfig does: the
// template's image, its config_map, the environment's specifics, then the
// environment's template_mapping for the template. It is Gargantua's copy,
// deliberately not the provisioner's, so tests notice if the two disagree.
func vmConfig(env *hfv1.Environment, tmpl *hfv1.VirtualMachineTemplate) map[string]string {
	config := map[string]string{"image": tmpl.Spec.Image}
	maps.Copy(config, tmpl.Spec.ConfigMap)
	maps.Copy(config, env.Spec.EnvironmentSpecifics)
	maps.Copy(config, env.Spec.TemplateMapping[tmpl.Name])
	return config
}

// configuredSpec is the part of a VM's spec Gargantua takes from the merged
// config: the protocol (ssh unless configured) and ssh_username (empty, i.e.
// "ubuntu" for Gargantua's shell, unless configured).
func configuredSpec(env *hfv1.Environment, tmpl *hfv1.VirtualMachineTemplate) hfv1.VirtualMachineSpec {
	config := vmConfig(env, tmpl)
	spec := hfv1.VirtualMachineSpec{VirtualMachineTemplateId: tmpl.Name, Protocol: "ssh", SshUsername: config["ssh_username"]}
	if protocol, ok := config["protocol"]; ok {
		spec.Protocol = protocol
	}
	return spec
}
