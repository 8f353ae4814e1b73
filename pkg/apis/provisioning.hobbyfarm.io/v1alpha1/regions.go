package v1alpha1

import "strings"

// Regions are the regions spec.region lists, in order of preference.
func (s DropletSpec) Regions() []string { return SplitList(s.Region) }

// VPCIn is the VPC a droplet created in region joins: spec.vpcUUID when it
// names one VPC, else its region=uuid entry for region ("" when none).
func (s DropletSpec) VPCIn(region string) string {
	if !strings.Contains(s.VPCUUID, "=") {
		return s.VPCUUID
	}
	for _, pair := range SplitList(s.VPCUUID) {
		if r, uuid, _ := strings.Cut(pair, "="); strings.TrimSpace(r) == region {
			return strings.TrimSpace(uuid)
		}
	}
	return ""
}

// SplitList splits a comma-separated setting into its non-empty, trimmed items.
func SplitList(v string) []string {
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
