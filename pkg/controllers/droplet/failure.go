package droplet

import (
	"fmt"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
)

// settingValue is the value of config key as d sent it.
func settingValue(d *v1alpha1.Droplet, key string) string {
	switch key {
	case config.KeyRegion:
		return d.Spec.Region
	case config.KeySize:
		return d.Spec.Size
	case config.KeyImage:
		return d.Spec.Image
	case config.KeyVPCUUID:
		return d.Spec.VPCUUID
	case config.KeyTags:
		return fmt.Sprint(d.Spec.Tags)
	case config.KeyUserData:
		// Up to 64 KiB: its size says enough.
		return fmt.Sprintf("(%d bytes)", len(d.Spec.UserData))
	}
	return ""
}
