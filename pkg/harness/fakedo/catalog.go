package fakedo

import (
	"strconv"

	"github.com/digitalocean/godo"
)

// catalog is the fixed set of regions, sizes and images a create can name.
type catalog struct {
	regions []godo.Region
	sizes   []godo.Size
	images  []godo.Image

	regionBySlug map[string]godo.Region
	sizeBySlug   map[string]godo.Size
	imageBySlug  map[string]godo.Image
	imageByID    map[int]godo.Image
}

var regionFeatures = []string{"backups", "ipv6", "metadata", "install_agent", "storage", "image_transfer"}

func builtinRegions() []godo.Region {
	names := []struct{ slug, name string }{
		{"nyc1", "New York 1"}, {"nyc3", "New York 3"}, {"sfo3", "San Francisco 3"},
		{"ams3", "Amsterdam 3"}, {"fra1", "Frankfurt 1"}, {"lon1", "London 1"},
		{"sgp1", "Singapore 1"}, {"tor1", "Toronto 1"}, {"blr1", "Bangalore 1"},
		{"syd1", "Sydney 1"},
	}
	out := make([]godo.Region, 0, len(names))
	for _, n := range names {
		out = append(out, godo.Region{Slug: n.slug, Name: n.name, Available: true, Features: regionFeatures})
	}
	return out
}

func builtinSizes() []godo.Size {
	type sz struct {
		slug              string
		mem, vcpus, disk  int
		monthly, transfer float64
		desc              string
	}
	list := []sz{
		{"s-1vcpu-512mb-10gb", 512, 1, 10, 4, 0.5, "Basic"},
		{"s-1vcpu-1gb", 1024, 1, 25, 6, 1, "Basic"},
		{"s-1vcpu-2gb", 2048, 1, 50, 12, 2, "Basic"},
		{"s-2vcpu-2gb", 2048, 2, 60, 18, 3, "Basic"},
		{"s-2vcpu-4gb", 4096, 2, 80, 24, 4, "Basic"},
		{"s-4vcpu-8gb", 8192, 4, 160, 48, 5, "Basic"},
	}
	out := make([]godo.Size, 0, len(list))
	for _, s := range list {
		out = append(out, godo.Size{
			Slug: s.slug, Memory: s.mem, Vcpus: s.vcpus, Disk: s.disk,
			PriceMonthly: s.monthly, PriceHourly: roundCents(s.monthly / 672),
			Transfer: s.transfer, Available: true, Description: s.desc,
		})
	}
	return out
}

func builtinImages() []godo.Image {
	list := []struct{ slug, dist, name string }{
		{"ubuntu-20-04-x64", "Ubuntu", "20.04 (LTS) x64"},
		{"ubuntu-22-04-x64", "Ubuntu", "22.04 (LTS) x64"},
		{"ubuntu-24-04-x64", "Ubuntu", "24.04 (LTS) x64"},
		{"debian-12-x64", "Debian", "12 x64"},
		{"rockylinux-9-x64", "Rocky Linux", "9 x64"},
	}
	out := make([]godo.Image, 0, len(list))
	for i, im := range list {
		out = append(out, godo.Image{
			ID: 150000001 + i, Name: im.name, Type: "base", Distribution: im.dist, Slug: im.slug,
			Public: true, MinDiskSize: 7, SizeGigaBytes: 2.36, Created: "2024-04-23T10:00:00Z",
			Description: im.dist + " " + im.name, Status: "available",
		})
	}
	return out
}

func roundCents(f float64) float64 { return float64(int(f*100000+0.5)) / 100000 }

func newCatalog(opts Options) *catalog {
	c := &catalog{
		regionBySlug: map[string]godo.Region{},
		sizeBySlug:   map[string]godo.Size{},
		imageBySlug:  map[string]godo.Image{},
		imageByID:    map[int]godo.Image{},
	}
	regions := append(builtinRegions(), opts.ExtraRegions...)
	sizes := append(builtinSizes(), opts.ExtraSizes...)
	images := append(builtinImages(), opts.ExtraImages...)
	for _, r := range regions {
		if _, dup := c.regionBySlug[r.Slug]; !dup {
			c.regions = append(c.regions, r)
		}
		c.regionBySlug[r.Slug] = r
	}
	for _, s := range sizes {
		if _, dup := c.sizeBySlug[s.Slug]; !dup {
			c.sizes = append(c.sizes, s)
		}
		c.sizeBySlug[s.Slug] = s
	}
	for i, im := range images {
		if im.ID == 0 {
			im.ID = 160000001 + i
		}
		if _, dup := c.imageBySlug[im.Slug]; !dup || im.Slug == "" {
			c.images = append(c.images, im)
		}
		if im.Slug != "" {
			c.imageBySlug[im.Slug] = im
		}
		c.imageByID[im.ID] = im
	}
	// Replace listed entries by their final (possibly overridden) values
	// and fill in region/size cross references.
	allRegions := make([]string, 0, len(c.regions))
	for _, r := range c.regions {
		allRegions = append(allRegions, r.Slug)
	}
	for i, s := range c.sizes {
		s = c.sizeBySlug[s.Slug]
		if len(s.Regions) == 0 {
			s.Regions = allRegions
		}
		c.sizes[i], c.sizeBySlug[s.Slug] = s, s
	}
	for i, r := range c.regions {
		r = c.regionBySlug[r.Slug]
		if len(r.Sizes) == 0 {
			for _, s := range c.sizes {
				if contains(s.Regions, r.Slug) {
					r.Sizes = append(r.Sizes, s.Slug)
				}
			}
		}
		c.regions[i], c.regionBySlug[r.Slug] = r, r
	}
	for i, im := range c.images {
		if im.Slug != "" {
			im = c.imageBySlug[im.Slug]
		}
		if len(im.Regions) == 0 {
			im.Regions = allRegions
		}
		c.images[i], c.imageByID[im.ID] = im, im
		if im.Slug != "" {
			c.imageBySlug[im.Slug] = im
		}
	}
	return c
}

// image finds an image by slug or numeric id.
func (c *catalog) image(ref string) (godo.Image, bool) {
	if im, ok := c.imageBySlug[ref]; ok {
		return im, true
	}
	if id, err := strconv.Atoi(ref); err == nil {
		im, ok := c.imageByID[id]
		return im, ok
	}
	return godo.Image{}, false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
