package digitalocean

import (
	"context"
	"strings"

	"github.com/digitalocean/godo"
)

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
