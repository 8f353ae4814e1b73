package digitalocean

import (
	"context"
	"strings"

	"github.com/digitalocean/godo"
)

// ListByTag pages through every droplet carrying tag (godo returns one page a call).
func ListByTag(ctx context.Context, client *godo.Client, tag string) ([]godo.Droplet, error) {
	// The rest of a list goes one priority up: one page held back wastes
	// the pages before it, and with many re-reads waiting for room every
	// freed slot went to a new list's first page that never finished.
	return listPages(ctx, 200, raisePriority, func(ctx context.Context, opt *godo.ListOptions) ([]godo.Droplet, *godo.Response, error) {
		return client.Droplets.ListByTag(ctx, tag, opt)
	})
}

// ListByName lists the droplets named name: DigitalOcean matches the
// whole name, ignoring case.
func ListByName(ctx context.Context, client *godo.Client, name string) ([]godo.Droplet, error) {
	return listPages(ctx, 200, raisePriority, func(ctx context.Context, opt *godo.ListOptions) ([]godo.Droplet, *godo.Response, error) {
		return client.Droplets.ListByName(ctx, name, opt)
	})
}

// ListDroplets pages through every droplet of the account.
func ListDroplets(ctx context.Context, client *godo.Client) ([]godo.Droplet, error) {
	return listPages(ctx, 200, raisePriority, client.Droplets.List)
}

// ListKeys pages through every SSH key of the account.
func ListKeys(ctx context.Context, client *godo.Client) ([]godo.Key, error) {
	return listPages(ctx, 200, raisePriority, client.Keys.List)
}

// listPages pages through a godo list of perPage items a page. nextPage
// gives the context of the pages after the first.
func listPages[T any](ctx context.Context, perPage int, nextPage func(context.Context) context.Context,
	list func(context.Context, *godo.ListOptions) ([]T, *godo.Response, error)) ([]T, error) {
	var out []T
	opt := &godo.ListOptions{PerPage: perPage}
	for {
		page, resp, err := list(ctx, opt)
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
		ctx = nextPage(ctx)
	}
}

// VMUIDFromTags reads the VM UID back from a droplet's tags ("" if none).
func VMUIDFromTags(tags []string) string { return tagValue(tags, tagVMPrefix) }

// VMNameFromTags reads the (tag-safe) VM name back from a droplet's tags.
func VMNameFromTags(tags []string) string { return tagValue(tags, tagVMNamePrefix) }

func tagValue(tags []string, prefix string) string {
	for _, t := range tags {
		if strings.HasPrefix(t, prefix) {
			return strings.TrimPrefix(t, prefix)
		}
	}
	return ""
}
