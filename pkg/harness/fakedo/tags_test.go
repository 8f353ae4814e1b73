package fakedo

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/digitalocean/godo"
)

func TestTagResources(t *testing.T) {
	srv := startFake(t, Options{}, AccountOptions{})
	c := newClient(t, srv, testToken)
	ctx := ctxT(t)
	d, _, err := c.Droplets.Create(ctx, basicCreate("pool-1"))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	tagDroplet := &godo.TagResourcesRequest{Resources: []godo.Resource{{ID: strconv.Itoa(d.ID), Type: godo.DropletResourceType}}}

	// Tagging with a tag that does not exist yet is refused, as on DigitalOcean.
	_, err = c.Tags.TagResources(ctx, "hfdo-vm:abc", tagDroplet)
	wantStatus(t, err, http.StatusNotFound)

	for range 2 { // creating an existing tag answers with it again
		tag, resp, err := c.Tags.Create(ctx, &godo.TagCreateRequest{Name: "hfdo-vm:abc"})
		if err != nil || resp.StatusCode != http.StatusCreated || tag.Name != "hfdo-vm:abc" {
			t.Fatalf("Tags.Create: %+v %v", tag, err)
		}
	}
	if _, err := c.Tags.TagResources(ctx, "hfdo-vm:abc", tagDroplet); err != nil {
		t.Fatalf("TagResources: %v", err)
	}
	listed, _, err := c.Droplets.ListByTag(ctx, "hfdo-vm:abc", nil)
	if err != nil || len(listed) != 1 || listed[0].ID != d.ID {
		t.Fatalf("ListByTag after tagging: %+v %v", listed, err)
	}
	// A droplet's own tags exist: tagging another droplet with one works.
	if _, err := c.Tags.TagResources(ctx, "env:test", tagDroplet); err != nil {
		t.Fatalf("TagResources with a droplet's tag: %v", err)
	}

	missing := &godo.TagResourcesRequest{Resources: []godo.Resource{{ID: "999999", Type: godo.DropletResourceType}}}
	_, err = c.Tags.TagResources(ctx, "hfdo-vm:abc", missing)
	wantStatus(t, err, http.StatusNotFound)
	_, _, err = c.Tags.Create(ctx, &godo.TagCreateRequest{Name: "bad tag!"})
	wantStatus(t, err, http.StatusUnprocessableEntity)
}
