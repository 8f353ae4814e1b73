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
// none (the caller looks it up: it may take a request). With several
// regions listed, a region that cannot serve is a Warning while another
// can (creates pass it over), and an error only when none can.
func catalogProblems(cat *digitalocean.Catalog, cfg *config.Droplet, image *godo.Image, l locator) []Problem {
	var out []Problem
	add := func(key, reason, format string, args ...any) {
		loc := l.locate(key)
		out = append(out, Problem{Template: l.vmt.Name, Location: loc, Reason: reason, Text: fmt.Sprintf(format, args...)})
	}
	regions := cfg.Regions()
	first := cfg.Region
	if len(regions) > 0 {
		first = regions[0]
	}
	size, sizeOK := cat.Sizes[cfg.Size]
	switch {
	case !sizeOK:
		add(config.KeySize, ReasonNotInCatalog, "%q is not a DigitalOcean size; see GET /v2/sizes (doctl compute size list), e.g. %s",
			cfg.Size, suggest(sizesIn(cat, first)))
	case !size.Available:
		add(config.KeySize, ReasonNotInCatalog, "size %q is no longer offered by DigitalOcean; use another size, e.g. %s",
			cfg.Size, suggest(sizesIn(cat, first)))
	}
	if image == nil {
		add(config.KeyImage, ReasonNotInCatalog, "%q is not an image DigitalOcean has for this token; see GET /v2/images?type=distribution (doctl compute image list-distribution), e.g. %s, or use a snapshot's numeric ID",
			cfg.Image, suggest(imageSlugs(cat, cfg.Image)))
	}
	var byRegion [][]Problem
	serving := 0
	for _, r := range regions {
		found := regionProblems(cat, cfg, r, sizeOK && size.Available, image, l)
		if len(found) == 0 {
			serving++
		}
		byRegion = append(byRegion, found)
	}
	for _, found := range byRegion {
		for _, p := range found {
			if serving > 0 {
				p.Advisory = true
				p.Text += "; creates go to the other listed regions instead"
			}
			out = append(out, p)
		}
	}
	return out
}

// regionProblems are why region cannot serve cfg: the region itself, or
// the size (when sizeOK: offered somewhere) or image (when found) not
// offered there.
func regionProblems(cat *digitalocean.Catalog, cfg *config.Droplet, region string, sizeOK bool, image *godo.Image, l locator) []Problem {
	var out []Problem
	add := func(key, reason, format string, args ...any) {
		out = append(out, Problem{Template: l.vmt.Name, Location: l.locate(key), Reason: reason, Text: fmt.Sprintf(format, args...)})
	}
	r, known := cat.Regions[region]
	switch {
	case !known:
		add(config.KeyRegion, ReasonNotInCatalog, "%q is not a DigitalOcean region; see GET /v2/regions (doctl compute region list), e.g. %s",
			region, suggest(availableRegions(cat, cfg.Size)))
		return out
	case !r.Available:
		add(config.KeyRegion, ReasonNotInCatalog, "region %q takes no new droplets (DigitalOcean lists it as unavailable); use another region, e.g. %s",
			region, suggest(availableRegions(cat, cfg.Size)))
		return out
	}
	if sizeOK && !cat.SizeInRegion(cfg.Size, region) {
		add(config.KeySize, ReasonNotInRegion, "size %q is not offered in region %q (%s); use a size offered there, e.g. %s, or a region that offers it, e.g. %s",
			cfg.Size, region, l.locate(config.KeyRegion), suggest(sizesIn(cat, region)), suggest(availableRegions(cat, cfg.Size)))
	}
	if image != nil && len(image.Regions) > 0 && !slices.Contains(image.Regions, region) {
		add(config.KeyImage, ReasonNotInRegion, "image %q is not available in region %q (%s); transfer it there or use a region it is in, e.g. %s",
			cfg.Image, region, l.locate(config.KeyRegion), suggest(image.Regions))
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
