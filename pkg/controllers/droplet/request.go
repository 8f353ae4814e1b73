package droplet

import (
	"context"
	"strings"

	"github.com/digitalocean/godo"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
)

func createRequest(d *v1alpha1.Droplet, keys []godo.DropletCreateSSHKey) *godo.DropletCreateRequest {
	return &godo.DropletCreateRequest{
		Name:              d.Spec.Name,
		Region:            d.Spec.Region,
		Size:              d.Spec.Size,
		Image:             godo.DropletCreateImage{Slug: d.Spec.Image},
		SSHKeys:           keys,
		Backups:           d.Spec.Backups,
		IPv6:              d.Spec.IPv6,
		Monitoring:        d.Spec.Monitoring,
		PrivateNetworking: d.Spec.PrivateNetworking,
		UserData:          d.Spec.UserData,
		Tags:              d.Spec.Tags,
		VPCUUID:           d.Spec.VPCUUID,
	}
}

// vmUID reads the VM's UID back from the droplet's identifying tag.
func vmUID(d *v1alpha1.Droplet) string {
	prefix := digitalocean.VMTag("")
	for _, t := range d.Spec.Tags {
		if strings.HasPrefix(t, prefix) {
			return strings.TrimPrefix(t, prefix)
		}
	}
	return ""
}

// findByTag returns the oldest droplet carrying tag, or nil. The tag holds the
// VM's UID, so at most one droplet should ever carry it.
func findByTag(ctx context.Context, client *godo.Client, tag string) (*godo.Droplet, error) {
	all, err := listByTag(ctx, client, tag)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	oldest := all[0]
	for _, d := range all[1:] {
		if d.ID < oldest.ID {
			oldest = d
		}
	}
	return &oldest, nil
}

// listByTag pages through every droplet carrying tag.
func listByTag(ctx context.Context, client *godo.Client, tag string) ([]godo.Droplet, error) {
	var out []godo.Droplet
	opt := &godo.ListOptions{PerPage: 200}
	for {
		page, resp, err := client.Droplets.ListByTag(ctx, tag, opt)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if resp.Links == nil || resp.Links.IsLastPage() {
			return out, nil
		}
		current, err := resp.Links.CurrentPage()
		if err != nil {
			return nil, err
		}
		opt.Page = current + 1
	}
}
