package environment

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/digitalocean/godo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
)

// maxSuggestions is how many slugs a fix offers.
const maxSuggestions = 3

// catalogProblems checks a parsed config against what DigitalOcean offers
// its token. image is the image cfg.Image names, nil when DigitalOcean has
// none (the caller looks it up: it may take a request).
func catalogProblems(cat *digitalocean.Catalog, cfg *config.Droplet, image *godo.Image, l locator) []Problem {
	var out []Problem
	add := func(key, reason, format string, args ...any) {
		loc := l.locate(key)
		out = append(out, Problem{Template: l.vmt.Name, Location: loc, Reason: reason, Text: fmt.Sprintf(format, args...)})
	}
	region, regionOK := cat.Regions[cfg.Region]
	switch {
	case !regionOK:
		add(config.KeyRegion, ReasonNotInCatalog, "%q is not a DigitalOcean region; see GET /v2/regions (doctl compute region list), e.g. %s",
			cfg.Region, suggest(availableRegions(cat, cfg.Size)))
	case !region.Available:
		add(config.KeyRegion, ReasonNotInCatalog, "region %q takes no new droplets (DigitalOcean lists it as unavailable); use another region, e.g. %s",
			cfg.Region, suggest(availableRegions(cat, cfg.Size)))
		regionOK = false
	}
	size, sizeOK := cat.Sizes[cfg.Size]
	switch {
	case !sizeOK:
		add(config.KeySize, ReasonNotInCatalog, "%q is not a DigitalOcean size; see GET /v2/sizes (doctl compute size list), e.g. %s",
			cfg.Size, suggest(sizesIn(cat, cfg.Region)))
	case !size.Available:
		add(config.KeySize, ReasonNotInCatalog, "size %q is no longer offered by DigitalOcean; use another size, e.g. %s",
			cfg.Size, suggest(sizesIn(cat, cfg.Region)))
	case regionOK && !cat.SizeInRegion(cfg.Size, cfg.Region):
		add(config.KeySize, ReasonNotInRegion, "size %q is not offered in region %q (%s); use a size offered there, e.g. %s, or a region that offers it, e.g. %s",
			cfg.Size, cfg.Region, l.locate(config.KeyRegion), suggest(sizesIn(cat, cfg.Region)), suggest(availableRegions(cat, cfg.Size)))
	}
	switch {
	case image == nil:
		add(config.KeyImage, ReasonNotInCatalog, "%q is not an image DigitalOcean has for this token; see GET /v2/images?type=distribution (doctl compute image list-distribution), e.g. %s, or use a snapshot's numeric ID",
			cfg.Image, suggest(imageSlugs(cat, cfg.Image)))
	case regionOK && len(image.Regions) > 0 && !slices.Contains(image.Regions, cfg.Region):
		add(config.KeyImage, ReasonNotInRegion, "image %q is not available in region %q (%s); transfer it there or use a region it is in, e.g. %s",
			cfg.Image, cfg.Region, l.locate(config.KeyRegion), suggest(image.Regions))
	}
	return out
}

// availableRegions are the regions taking droplets, those offering size
// first when it is a known size.
func availableRegions(cat *digitalocean.Catalog, size string) []string {
	var offering, others []string
	for slug, r := range cat.Regions {
		switch {
		case !r.Available:
		case cat.SizeInRegion(size, slug):
			offering = append(offering, slug)
		default:
			others = append(others, slug)
		}
	}
	sort.Strings(offering)
	sort.Strings(others)
	return append(offering, others...)
}

// sizesIn are the available sizes, cheapest first, those offered in
// region first.
func sizesIn(cat *digitalocean.Catalog, region string) []string {
	var list []godo.Size
	for _, s := range cat.Sizes {
		if s.Available {
			list = append(list, s)
		}
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if inA, inB := cat.SizeInRegion(a.Slug, region), cat.SizeInRegion(b.Slug, region); inA != inB {
			return inA
		}
		if a.PriceMonthly != b.PriceMonthly {
			return a.PriceMonthly < b.PriceMonthly
		}
		return a.Slug < b.Slug
	})
	out := make([]string, 0, len(list))
	for _, s := range list {
		out = append(out, s.Slug)
	}
	return out
}

// imageSlugs are the distribution images, those of the same distribution
// as like (its first word) first.
func imageSlugs(cat *digitalocean.Catalog, like string) []string {
	family, _, _ := strings.Cut(like, "-")
	out := make([]string, 0, len(cat.Images))
	for slug := range cat.Images {
		out = append(out, slug)
	}
	sort.Slice(out, func(i, j int) bool {
		if a, b := strings.HasPrefix(out[i], family+"-"), strings.HasPrefix(out[j], family+"-"); a != b {
			return a
		}
		return out[i] < out[j]
	})
	return out
}

func suggest(slugs []string) string {
	if len(slugs) == 0 {
		return "none offered to this token"
	}
	return strings.Join(slugs[:min(len(slugs), maxSuggestions)], ", ")
}
