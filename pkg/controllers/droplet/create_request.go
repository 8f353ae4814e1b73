package droplet

import (
	"reflect"

	"github.com/digitalocean/godo"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
)

// createRequest is d's create request to where's region, and the one
// place that turns a DropletSpec into settings: multiCreateRequest takes
// them from here.
func createRequest(d *v1alpha1.Droplet, keys []godo.DropletCreateSSHKey, where placement) *godo.DropletCreateRequest {
	return &godo.DropletCreateRequest{
		Name:              d.Spec.Name,
		Region:            where.region,
		Size:              d.Spec.Size,
		Image:             createImage(d.Spec.Image),
		SSHKeys:           keys,
		Backups:           d.Spec.Backups,
		IPv6:              d.Spec.IPv6,
		Monitoring:        d.Spec.Monitoring,
		PrivateNetworking: d.Spec.PrivateNetworking,
		UserData:          d.Spec.UserData,
		Tags:              sentTags(d),
		VPCUUID:           where.vpc(d),
	}
}

// multiCreateRequest creates members in one request with d's settings
// (equal to theirs: see batchKey). The multi-create's droplets carry the
// shared tags and the batch's (and any others given) instead of their own
// VM tags.
func multiCreateRequest(d *v1alpha1.Droplet, keys []godo.DropletCreateSSHKey, where placement, members []*v1alpha1.Droplet, batch string, tags ...string) *godo.DropletMultiCreateRequest {
	single := createRequest(d, keys, where)
	multi := &godo.DropletMultiCreateRequest{}
	copySameFields(multi, single)
	for _, m := range members {
		multi.Names = append(multi.Names, m.Spec.Name)
	}
	multi.Tags = append(append(digitalocean.SharedTags(single.Tags), batch), tags...)
	return multi
}

// copySameFields sets each field of *dst to the field of *src with the same
// name and type: godo's two create requests share their settings' fields,
// so a setting added to createRequest reaches the multi-create too.
func copySameFields(dst, src any) {
	to, from := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	for i := range from.NumField() {
		field := from.Type().Field(i)
		target := to.FieldByName(field.Name)
		if target.IsValid() && target.CanSet() && target.Type() == field.Type {
			target.Set(from.Field(i))
		}
	}
}

// createImage sends a numeric image (a snapshot or custom image) as its ID,
// which is how DigitalOcean's API takes it, and anything else as a slug.
func createImage(image string) godo.DropletCreateImage {
	if id, ok := config.IsImageID(image); ok {
		return godo.DropletCreateImage{ID: id}
	}
	return godo.DropletCreateImage{Slug: image}
}

// vmUID reads the VM's UID back from the droplet's identifying tag.
func vmUID(d *v1alpha1.Droplet) string { return digitalocean.VMUIDFromTags(d.Spec.Tags) }
