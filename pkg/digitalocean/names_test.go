package digitalocean

import (
	"regexp"
	"strings"
	"testing"
)

var hostname = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
var tag = regexp.MustCompile(`^[a-zA-Z0-9_\-:]{1,255}$`)

func TestDropletNameIsAValidHostname(t *testing.T) {
	long := strings.Repeat("a", 100)
	for _, c := range []struct{ vm, want string }{
		{"vm-abc123", "vm-abc123"},
		{long, ""},
		{long + "b", ""},
		{"my.vm.name", ""},
		{"---", ""},
	} {
		got := DropletName(c.vm)
		if !hostname.MatchString(got) {
			t.Errorf("%q → %q is not a hostname label", c.vm, got)
		}
		if c.want != "" && got != c.want {
			t.Errorf("%q → %q, want %q", c.vm, got, c.want)
		}
		if DropletName(c.vm) != got {
			t.Errorf("%q: not deterministic", c.vm)
		}
	}
	if DropletName(long) == DropletName(long+"b") {
		t.Error("two long names shortened to the same droplet name")
	}
}

func TestDropletTagsAreValidDigitalOceanTags(t *testing.T) {
	tags := DropletTags(strings.Repeat("i", 300), "hobbyfarm", "my.vm", "0b5c-uid", []string{"extra"})
	for _, tg := range tags {
		if !tag.MatchString(tg) {
			t.Errorf("tag %q is not valid for DigitalOcean", tg)
		}
	}
	if tags[len(tags)-2] != VMTag("0b5c-uid") || tags[len(tags)-1] != "extra" {
		t.Errorf("tags %v", tags)
	}
}

func TestTokenHashHidesTheToken(t *testing.T) {
	h := TokenHash("dop_v1_secret")
	if strings.Contains(h, "secret") || len(h) != 12 || h != TokenHash("dop_v1_secret") || h == TokenHash("other") {
		t.Errorf("TokenHash = %q", h)
	}
}

// A pool member is found by its identity like a VM's droplet, and by its
// pool's tag; extra tags never add a reserved one.
func TestPoolDropletTags(t *testing.T) {
	tags := PoolDropletTags("inst", "ns", "identity-uid", "pool-uid", []string{"team:a", "hfdo-pool:other", "hobbyfarm-provisioner"})
	if VMUIDFromTags(tags) != "identity-uid" {
		t.Errorf("identity from %v = %q, want identity-uid", tags, VMUIDFromTags(tags))
	}
	var pools []string
	for _, tag := range tags {
		if uid, ok := PoolUIDOfTag(tag); ok {
			pools = append(pools, uid)
		}
		if strings.HasPrefix(tag, tagVMNamePrefix) {
			t.Errorf("a pool member carries a VM name tag: %v", tags)
		}
	}
	if len(pools) != 1 || pools[0] != "pool-uid" || tags[len(tags)-1] != "team:a" || len(tags) != 6 {
		t.Errorf("tags %v: want one pool tag naming pool-uid and the extra team:a only", tags)
	}
}
