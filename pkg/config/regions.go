package config

import (
	"fmt"
	"slices"
	"strings"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
)

// Regions are the regions the config lists, in order of preference: each
// create goes to the first that can take it.
func (d *Droplet) Regions() []string { return v1alpha1.SplitList(d.Region) }

// checkRegions accepts one region slug or a comma-separated list of them,
// each named once.
func checkRegions(v, where string) error {
	regions := v1alpha1.SplitList(v)
	if len(regions) == 0 {
		return regionSlug.check(v, where)
	}
	for i, r := range regions {
		if err := regionSlug.check(r, where); err != nil {
			return err
		}
		if slices.Contains(regions[:i], r) {
			return &Error{Key: KeyRegion, Problem: fmt.Sprintf("lists %q twice", r),
				Fix: "name each region once, in order of preference (e.g. \"nyc3,sfo3\"), in " + where}
		}
	}
	return nil
}

// parseVPCs reads vpc_uuid: one VPC's UUID, or region=uuid pairs, one for
// each listed region. A VPC belongs to one region, so with several regions
// one UUID cannot serve them all. It returns the setting in one spelling.
func parseVPCs(v string, regions []string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", nil
	}
	perRegion := fmt.Sprintf("give one per region, e.g. %q, or remove the key", vpcExample(regions))
	if !strings.Contains(v, "=") {
		if !uuidPattern.MatchString(v) {
			return "", &Error{Key: KeyVPCUUID, Problem: fmt.Sprintf("%q is not a UUID", v),
				Fix: "use the VPC's id as `doctl vpcs list` shows it, or remove the key"}
		}
		if len(regions) > 1 {
			return "", &Error{Key: KeyVPCUUID, Problem: fmt.Sprintf("names one VPC, but region lists %d regions and a VPC belongs to one region", len(regions)),
				Fix: perRegion}
		}
		return v, nil
	}
	given := map[string]string{}
	for _, pair := range v1alpha1.SplitList(v) {
		region, uuid, _ := strings.Cut(pair, "=")
		region, uuid = strings.TrimSpace(region), strings.TrimSpace(uuid)
		switch {
		case !slices.Contains(regions, region):
			return "", &Error{Key: KeyVPCUUID, Problem: fmt.Sprintf("names a VPC for %q, which region does not list", region), Fix: perRegion}
		case !uuidPattern.MatchString(uuid):
			return "", &Error{Key: KeyVPCUUID, Problem: fmt.Sprintf("%q (for %s) is not a UUID", uuid, region),
				Fix: "use the VPC's id as `doctl vpcs list` shows it"}
		case given[region] != "":
			return "", &Error{Key: KeyVPCUUID, Problem: fmt.Sprintf("names two VPCs for %s", region), Fix: perRegion}
		}
		given[region] = uuid
	}
	var out []string
	for _, r := range regions {
		if given[r] == "" {
			// A droplet made there would join the region's default VPC, apart
			// from the others.
			return "", &Error{Key: KeyVPCUUID, Problem: fmt.Sprintf("names no VPC for %s, which region lists", r), Fix: perRegion}
		}
		out = append(out, r+"="+given[r])
	}
	return strings.Join(out, ","), nil
}

// vpcExample is vpc_uuid's per-region form for regions.
func vpcExample(regions []string) string {
	var parts []string
	for _, r := range regions {
		parts = append(parts, r+"=<uuid>")
	}
	return strings.Join(parts, ",")
}
