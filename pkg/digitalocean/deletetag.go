package digitalocean

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/digitalocean/godo"
)

// tagDeletePrefix starts the one-off tags of batched deletes.
const tagDeletePrefix = "hfdo-delete:"

// NewDeleteTag is a tag for batched deletes: the droplets of deleted VMs
// are put under it and deleted by it. It is random, and one process reuses
// it only after a delete by it succeeded (which left no droplet under it),
// so a tag a failed batch or a crashed process left on droplets can never
// reach a droplet tagged later; the droplets left under it go in a later
// batch under another tag.
func NewDeleteTag() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return tagDeletePrefix + hex.EncodeToString(b)
}

// IsDeleteTag reports a NewDeleteTag tag.
func IsDeleteTag(tag string) bool { return strings.HasPrefix(tag, tagDeletePrefix) }

// TagDroplets puts tag on the droplets ids with two requests, whatever
// their number: it creates the tag (DigitalOcean tags resources only with
// a tag that exists; creating one that exists answers with it), then tags
// them all at once. A 404 means a droplet (or the tag) is gone.
func TagDroplets(ctx context.Context, client *godo.Client, tag string, ids []int) error {
	if _, _, err := client.Tags.Create(ctx, &godo.TagCreateRequest{Name: tag}); err != nil {
		return err
	}
	return TagMoreDroplets(ctx, client, tag, ids)
}

// TagMoreDroplets puts tag, which exists, on the droplets ids with one
// request. A 404 means a droplet (or the tag) is gone.
func TagMoreDroplets(ctx context.Context, client *godo.Client, tag string, ids []int) error {
	resources := make([]godo.Resource, len(ids))
	for i, id := range ids {
		resources[i] = godo.Resource{ID: strconv.Itoa(id), Type: godo.DropletResourceType}
	}
	_, err := client.Tags.TagResources(ctx, tag, &godo.TagResourcesRequest{Resources: resources})
	return err
}
