package config

import (
	"errors"
	"strings"
	"testing"
)

const (
	uuidA = "11111111-1111-4111-8111-111111111111"
	uuidB = "22222222-2222-4222-8222-222222222222"
)

func TestRegionListAndItsVPCs(t *testing.T) {
	for _, c := range []struct {
		name, region, vpc   string
		wantRegion, wantVPC string
	}{
		{"one region, one VPC", "nyc3", uuidA, "nyc3", uuidA},
		{"a list in one spelling", " nyc3 , sfo3,", "", "nyc3,sfo3", ""},
		{"a VPC per region, in the list's order", "nyc3,sfo3", "sfo3=" + uuidB + ", nyc3=" + uuidA, "nyc3,sfo3", "nyc3=" + uuidA + ",sfo3=" + uuidB},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := valid()
			s["region"], s["vpc_uuid"] = c.region, c.vpc
			d, err := Parse(s, "here")
			if err != nil {
				t.Fatal(err)
			}
			if d.Region != c.wantRegion || d.VPCUUID != c.wantVPC {
				t.Errorf("region %q, vpc_uuid %q; want %q, %q", d.Region, d.VPCUUID, c.wantRegion, c.wantVPC)
			}
		})
	}
}

func TestRegionListErrorsSayTheFix(t *testing.T) {
	for _, c := range []struct {
		name, region, vpc, wantKey, wantText, wantFix string
	}{
		{"a region twice", "nyc3,sfo3,nyc3", "", "region", `lists "nyc3" twice`, "name each region once"},
		{"a bad slug in the list", "nyc3,SFO3", "", "region", `"SFO3" is not a DigitalOcean region slug`, `set it to "sfo3"`},
		{"one VPC for several regions", "nyc3,sfo3", uuidA, "vpc_uuid", "a VPC belongs to one region", "nyc3=<uuid>,sfo3=<uuid>"},
		{"a listed region without a VPC", "nyc3,sfo3", "nyc3=" + uuidA, "vpc_uuid", "names no VPC for sfo3", "nyc3=<uuid>,sfo3=<uuid>"},
		{"a VPC for an unlisted region", "nyc3", "nyc3=" + uuidA + ",ams3=" + uuidB, "vpc_uuid", `for "ams3", which region does not list`, "nyc3=<uuid>"},
		{"a bad UUID in the map", "nyc3,sfo3", "nyc3=" + uuidA + ",sfo3=vpc-2", "vpc_uuid", `"vpc-2" (for sfo3) is not a UUID`, "doctl vpcs list"},
		{"two VPCs for one region", "nyc3", "nyc3=" + uuidA + ",nyc3=" + uuidB, "vpc_uuid", "names two VPCs for nyc3", "nyc3=<uuid>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := valid()
			s["region"], s["vpc_uuid"] = c.region, c.vpc
			_, err := Parse(s, "here")
			var cfgErr *Error
			if !errors.As(err, &cfgErr) || cfgErr.Key != c.wantKey || !strings.Contains(cfgErr.Problem, c.wantText) || !strings.Contains(cfgErr.Fix, c.wantFix) {
				t.Errorf("error %v; want key %s saying %q, fix with %q", err, c.wantKey, c.wantText, c.wantFix)
			}
		})
	}
}
