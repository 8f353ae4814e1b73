package droplet

// Region fallback: spec.region may list several regions in order of
// preference. Each create goes to the first listed region that can take
// it: not sold out of the size (DigitalOcean refused a create of it there
// within the sold-out pause) and, when the token's catalog is at hand,
// offering the size and the image. A create refused as sold out made
// nothing, so it goes to the next region at once.

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
)

// DefaultSoldOutPause is how long a region that refused a size as sold out
// is passed over for it: DigitalOcean restocks over hours, and one create
// sent after the pause finds out whether it has.
const DefaultSoldOutPause = 30 * time.Minute

type regionSize struct{ region, size string }

// soldOutRegions remembers when DigitalOcean last refused a size in a
// region as sold out, and what it said. Capacity is DigitalOcean's, the
// same for every token, so one record serves them all.
type soldOutRegions struct {
	mu    sync.Mutex
	pause time.Duration
	at    map[regionSize]soldOut
}

type soldOut struct {
	at      time.Time
	message string
}

func newSoldOutRegions(pause time.Duration) *soldOutRegions {
	if pause <= 0 {
		pause = DefaultSoldOutPause
	}
	return &soldOutRegions{pause: pause, at: map[regionSize]soldOut{}}
}

// mark records that region refused size now.
func (s *soldOutRegions) mark(region, size, message string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.at[regionSize{region, size}] = soldOut{at: time.Now(), message: message}
}

// get is region's refusal of size within the pause; false when there is none.
func (s *soldOutRegions) get(region, size string) (soldOut, bool) {
	if s == nil {
		return soldOut{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out, ok := s.at[regionSize{region, size}]
	if ok && time.Since(out.at) >= s.pause {
		delete(s.at, regionSize{region, size})
		return soldOut{}, false
	}
	return out, ok
}

// describe says when region refused size and when it is tried again.
func (s *soldOutRegions) describe(region, size string, out soldOut) string {
	return fmt.Sprintf("%s (sold out of %s: DigitalOcean said %q at %s; tried again from %s)",
		region, size, out.message, clock(out.at), clock(out.at.Add(s.pause)))
}

func clock(t time.Time) string { return t.UTC().Format("15:04:05 UTC") }

// placement is where a create goes.
type placement struct {
	// region is the region to send the create to; "" when every listed
	// region is sold out of the size.
	region string
	// passed says why each region listed before it was passed over.
	passed []string
	// retry is, when region is "", how soon the first sold-out region is
	// tried again.
	retry time.Duration
}

// vpc is the VPC d joins in p's region.
func (p placement) vpc(d *v1alpha1.Droplet) string { return d.Spec.VPCIn(p.region) }

// note is what the Droplet's and the VM's messages add about regions
// passed over: "" when the create went to the first listed.
func (p placement) note() string {
	if len(p.passed) == 0 {
		return ""
	}
	return " instead of " + strings.Join(p.passed, ", ")
}

// place picks the region of d's next create.
func (h *handler) place(d *v1alpha1.Droplet) placement {
	regions := d.Spec.Regions()
	if len(regions) == 0 {
		return placement{region: d.Spec.Region}
	}
	sold := map[string]soldOut{}
	var open []string
	for _, r := range regions {
		if out, ok := h.soldOut.get(r, d.Spec.Size); ok {
			sold[r] = out
		} else {
			open = append(open, r)
		}
	}
	var p placement
	if len(open) == 0 {
		for _, r := range regions {
			p.passed = append(p.passed, h.soldOut.describe(r, d.Spec.Size, sold[r]))
			if wait := h.soldOut.pause - time.Since(sold[r].at); p.retry == 0 || wait < p.retry {
				p.retry = wait
			}
		}
		p.retry = max(p.retry, time.Second)
		return p
	}
	offered := h.offeredIn(d, open)
	if len(offered) == 0 {
		// The catalog may be stale: DigitalOcean decides.
		offered = open
	}
	p.region = offered[0]
	for _, r := range regions[:slices.Index(regions, p.region)] {
		if out, ok := sold[r]; ok {
			p.passed = append(p.passed, h.soldOut.describe(r, d.Spec.Size, out))
		} else {
			p.passed = append(p.passed, fmt.Sprintf("%s (the token's catalog does not offer %s with image %s there)", r, d.Spec.Size, d.Spec.Image))
		}
	}
	return p
}

// offeredIn are those of regions the token's catalog, when one was read,
// offers d's size and image in; all of them when none was or d lists one.
func (h *handler) offeredIn(d *v1alpha1.Droplet, regions []string) []string {
	if len(regions) <= 1 || h.opts.Catalogs == nil {
		return regions
	}
	token, err := digitalocean.ReadToken(h.secrets, d.Namespace, d.Spec.TokenSecretRef)
	if err != nil {
		return regions
	}
	cat := h.opts.Catalogs.Cached(token)
	if cat == nil {
		return regions
	}
	return slices.DeleteFunc(slices.Clone(regions), func(r string) bool {
		if !cat.SizeInRegion(d.Spec.Size, r) {
			return true
		}
		image, ok := cat.Images[d.Spec.Image]
		return ok && len(image.Regions) > 0 && !slices.Contains(image.Regions, r)
	})
}

// allSoldOut records that every region d lists is sold out of its size;
// the create waits for the first to be tried again, sending nothing.
func (h *handler) allSoldOut(d *v1alpha1.Droplet, p placement) time.Duration {
	origin := digitalocean.OriginOf(d, d.Spec.TokenSecretRef.Name)
	where := "the Environment's region setting"
	if origin.Environment != "" {
		where = fmt.Sprintf("region in Environment %q", origin.Environment)
	}
	h.pass.Fail(d, v1alpha1.Created, v1alpha1.ReasonSoldOut, fmt.Sprintf(
		"every listed region is sold out of %s: %s. No create is sent before then; to go sooner, add a region to %s, or choose another size",
		d.Spec.Size, strings.Join(p.passed, ", "), where))
	return p.retry
}

// toNextRegion sends d's create, which region just refused as sold out,
// to the next listed region that can take it at once, or, with none left,
// makes it wait for the first to be tried again.
func (h *handler) toNextRegion(d *v1alpha1.Droplet, region string) time.Duration {
	next := h.place(d)
	if next.region == "" {
		return h.allSoldOut(d, next)
	}
	logFor(d).WithField("region", region).WithField("next", next.region).Info("region sold out of the size; the create goes to the next region")
	// No Event: the VM's says where its droplet went and why.
	events.SetCondition(d, v1alpha1.Created, false, v1alpha1.ReasonNextRegion,
		fmt.Sprintf("%s is sold out of %s; the create goes to %s", region, d.Spec.Size, next.region))
	return 0
}
