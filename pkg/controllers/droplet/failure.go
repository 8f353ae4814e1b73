package droplet

import (
	"fmt"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
)

// origin is where d's settings came from, as the VM controller noted.
func origin(d *v1alpha1.Droplet) digitalocean.Origin {
	return digitalocean.Origin{
		Environment: d.Annotations[v1alpha1.EnvironmentAnnotation],
		Template:    d.Annotations[v1alpha1.TemplateAnnotation],
		TokenSecret: d.Spec.TokenSecretRef.Name,
	}
}

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
