package alphatest

import (
	"strconv"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
)

// alphaConfig is how the alpha read a VM's settings: from the VM's
// Environment only, template_mapping[<the VM's template>] first, then
// environment_specifics. It never read the template's image or config_map.
type alphaConfig struct {
	env *hfv1.Environment
	vm  *hfv1.VirtualMachine
}

func (c alphaConfig) get(item string) string {
	if v, ok := c.env.Spec.TemplateMapping[c.vm.Spec.VirtualMachineTemplateId][item]; ok {
		return v
	}
	return c.env.Spec.EnvironmentSpecifics[item]
}

// flag is a boolean setting; anything strconv cannot parse is false.
func (c alphaConfig) flag(item string) bool {
	b, err := strconv.ParseBool(c.get(item))
	return err == nil && b
}

// dropletRequest is the create request the alpha stored in spec.droplet
// and sent: the droplet named after the Droplet object, with the recorded
// DigitalOcean key.
func (c alphaConfig) dropletRequest(name string, key doKey) dropletCreateRequest {
	return dropletCreateRequest{
		Name:              name,
		Region:            c.get("region"),
		Size:              c.get("size"),
		Image:             createImage{Slug: c.get("image")},
		SSHKeys:           []createSSHKey{{ID: key.ID, Fingerprint: key.Fingerprint}},
		Backups:           c.flag("backups"),
		IPv6:              c.flag("ipv6"),
		PrivateNetworking: c.flag("private_networking"),
		Monitoring:        c.flag("monitoring"),
		UserData:          c.get("user_data"),
	}
}
