package config

import (
	"errors"
	"strings"
	"testing"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshkey"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Each row sets one key at some of the four layers; the highest layer wins,
// in Gargantua's order: template image < template config_map < environment_specifics < template_mapping.
func TestMergePrecedence(t *testing.T) {
	for _, c := range []struct {
		name                        string
		image, configMap, specifics string
		mapping                     string
		want                        string
	}{
		{"template image only", "img-vmt", "", "", "", "img-vmt"},
		{"config_map beats template image", "img-vmt", "img-cm", "", "", "img-cm"},
		{"environment_specifics beats config_map", "img-vmt", "img-cm", "img-env", "", "img-env"},
		{"template_mapping beats everything", "img-vmt", "img-cm", "img-env", "img-map", "img-map"},
		{"template_mapping beats template image", "img-vmt", "", "", "img-map", "img-map"},
		{"environment_specifics beats template image", "img-vmt", "", "img-env", "", "img-env"},
		{"config_map alone", "", "img-cm", "", "", "img-cm"},
		{"nothing", "", "", "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			vmt := &hfv1.VirtualMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: "tmpl"}, Spec: hfv1.VirtualMachineTemplateSpec{Image: c.image, ConfigMap: layer(c.configMap)}}
			env := &hfv1.Environment{Spec: hfv1.EnvironmentSpec{
				EnvironmentSpecifics: layer(c.specifics),
				TemplateMapping:      map[string]map[string]string{"tmpl": layer(c.mapping), "other": {"image": "wrong"}},
			}}
			if got := Merge(env, vmt)[KeyImage]; got != c.want {
				t.Errorf("image = %q, want %q", got, c.want)
			}
		})
	}
}

func layer(image string) map[string]string {
	if image == "" {
		return nil
	}
	return map[string]string{KeyImage: image}
}

func valid() map[string]string {
	return map[string]string{"region": "nyc1", "image": "ubuntu-22-04-x64", "size": "s-1vcpu-1gb", "token-secret": "do"}
}

func TestParseValid(t *testing.T) {
	s := valid()
	s["backups"], s["ipv6"], s["tags"], s["ssh_username"] = "true", "false", "a, b:c", "ubuntu"
	d, err := Parse(s, "here")
	if err != nil {
		t.Fatal(err)
	}
	if !d.Backups || d.IPv6 || strings.Join(d.Tags, "|") != "a|b:c" || d.SSHUsername != "ubuntu" || d.TokenSecret != "do" {
		t.Errorf("parsed %+v", d)
	}
	delete(s, "ssh_username")
	if d, _ := Parse(s, "here"); d.SSHUsername != "root" {
		t.Errorf("default ssh_username %q, want root", d.SSHUsername)
	}
}

func TestParseErrorsNameTheKey(t *testing.T) {
	for _, c := range []struct {
		key, value, wantKey, wantText string
	}{
		{"region", "", "region", "missing"},
		{"image", " ", "image", "missing"},
		{"size", "", "size", "missing"},
		{"token", "dop_v1_x", "token-secret", "both"},
		{"token-secret", "", "token-secret", "neither"},
		{"backups", "True", "backups", "not a boolean"},
		{"ipv6", "1", "ipv6", "not a boolean"},
		{"monitoring", "yes", "monitoring", "not a boolean"},
		{"private_networking", "no", "private_networking", "not a boolean"},
		{"user_data", strings.Repeat("x", MaxUserDataBytes+1), "user_data", "over DigitalOcean's limit"},
		{"tags", "ok,has space", "tags", "not a valid DigitalOcean tag"},
		{"tags", strings.Repeat("t", 256), "tags", "not a valid"},
		{"vpc_uuid", "vpc-1", "vpc_uuid", "not a UUID"},
		{"warm_pool", "-1", "warm_pool", "not a whole number"},
		{"warm_pool", "101", "warm_pool", "0 to 100"},
		{"warm_pool", "five", "warm_pool", "not a whole number"},
		{"warm_pool", "Auto", "warm_pool", "not a whole number"},
		{"warm_pool_max", "0", "warm_pool_max", "from 1 to 100"},
		{"warm_pool_max", "101", "warm_pool_max", "from 1 to 100"},
		{"warm_pool_max", "auto", "warm_pool_max", "not a whole number"},
	} {
		s := valid()
		s[c.key] = c.value
		_, err := Parse(s, "Environment \"e\"")
		var cfgErr *Error
		if !errors.As(err, &cfgErr) || cfgErr.Key != c.wantKey || !strings.Contains(err.Error(), c.wantText) || cfgErr.Fix == "" {
			t.Errorf("%s=%q: error %v, want key %s mentioning %q with a fix", c.key, c.value, err, c.wantKey, c.wantText)
		}
	}
	s := valid()
	s["user_data"] = strings.Repeat("x", MaxUserDataBytes)
	if _, err := Parse(s, "here"); err != nil {
		t.Errorf("user_data of exactly 64 KiB rejected: %v", err)
	}
}

func TestUnknownKeysSuggestTheKnownOne(t *testing.T) {
	got := UnknownKeys(map[string]string{"regoin": "x", "private-networking": "true", "token_secret": "s", "region": "nyc1", "zzzzzzzzzz": "y"})
	want := map[string]string{"regoin": "region", "private-networking": "private_networking", "token_secret": "token-secret"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s → %q, want %q", k, got[k], v)
		}
	}
}

// Slugs as DigitalOcean lists them parse; anything else is a *Error naming
// the key, with a fix, and never echoes a huge value.
func TestSlugs(t *testing.T) {
	for _, c := range []struct {
		key, value string
		ok         bool
		wantText   string // in the error
	}{
		{"region", "nyc1", true, ""},
		{"region", "sfo3", true, ""},
		{"region", " ams3 ", true, ""},
		{"region", "NYC1", false, `slugs are lowercase: set it to "nyc1"`},
		{"region", "nyc 1", false, "not a DigitalOcean region slug"},
		{"region", "nyc_1", false, "not a DigitalOcean region slug"},
		{"region", "nyc1.", false, "not a DigitalOcean region slug"},
		{"region", "-nyc1", false, "not a DigitalOcean region slug"},
		{"region", "nyc--1", false, "not a DigitalOcean region slug"},
		{"region", "nyc1\xff", false, "not a DigitalOcean region slug"},
		{"region", "nyç1", false, "not a DigitalOcean region slug"},
		{"region", strings.Repeat("a", MaxRegionSlugLen), true, ""},
		{"region", strings.Repeat("a", MaxRegionSlugLen+1), false, "longer than any DigitalOcean region slug"},
		{"size", "s-1vcpu-1gb", true, ""},
		{"size", "s-1vcpu-512mb-10gb", true, ""},
		{"size", "c-2", true, ""},
		{"size", "so1_5-2vcpu-16gb", true, ""},
		{"size", "gpu-h100x1-80gb", true, ""},
		{"size", "S-1VCPU-1GB", false, `set it to "s-1vcpu-1gb"`},
		{"size", "s-1vcpu-1gb.x", false, "not a DigitalOcean size slug"},
		{"size", "s-1vcpu-1gb/x", false, "not a DigitalOcean size slug"},
		{"size", strings.Repeat("s", 1<<20), false, "(1048576 bytes)"},
		{"image", "ubuntu-22-04-x64", true, ""},
		{"image", "docker-20-04", true, ""},
		{"image", "vendor-app.v1_2-20-04", true, ""},
		{"image", "123456789", true, ""},
		{"image", "0", false, "not a valid DigitalOcean image ID"},
		{"image", "99999999999999999999999", false, "not a valid DigitalOcean image ID"},
		{"image", "Ubuntu-22-04-x64", false, `set it to "ubuntu-22-04-x64"`},
		{"image", "ubuntu 22.04", false, "not a DigitalOcean image slug"},
		{"image", "ubuntu-22-04-x64\x00", false, "not a DigitalOcean image slug"},
		{"image", "registry.example.com/ubuntu:22.04", false, "not a DigitalOcean image slug"},
		{"image", strings.Repeat("i", MaxImageSlugLen), true, ""},
		{"image", strings.Repeat("i", MaxImageSlugLen+1), false, "longer than any DigitalOcean image slug"},
	} {
		s := valid()
		s[c.key] = c.value
		d, err := Parse(s, `Environment "e"`)
		if c.ok {
			if err != nil {
				t.Errorf("%s=%q rejected: %v", c.key, short(c.value), err)
			} else if got := map[string]string{"region": d.Region, "size": d.Size, "image": d.Image}[c.key]; got != strings.TrimSpace(c.value) {
				t.Errorf("%s=%q parsed as %q", c.key, short(c.value), got)
			}
			continue
		}
		var cfgErr *Error
		if !errors.As(err, &cfgErr) || cfgErr.Key != c.key || cfgErr.Fix == "" || !strings.Contains(err.Error(), c.wantText) {
			t.Errorf("%s=%q: error %v, want a *Error on %s with a fix mentioning %q", c.key, short(c.value), err, c.key, c.wantText)
			continue
		}
		if len(err.Error()) > 400 {
			t.Errorf("%s=%q: message is %d bytes: %s", c.key, short(c.value), len(err.Error()), short(err.Error()))
		}
	}
}

func short(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

func TestIsImageID(t *testing.T) {
	for image, want := range map[string]int{"123": 123, "ubuntu-22-04-x64": 0, "": 0, "0": 0, "12a": 0, "-1": 0} {
		if id, ok := IsImageID(image); id != want || ok != (want != 0) {
			t.Errorf("IsImageID(%q) = %d, %v; want %d", image, id, ok, want)
		}
	}
}

func TestSSHKeyType(t *testing.T) {
	for _, c := range []struct {
		value string
		want  sshkey.Type
		ok    bool
	}{
		{"", sshkey.ED25519, true},
		{"ed25519", sshkey.ED25519, true},
		{" rsa ", sshkey.RSA, true},
		{"RSA", "", false},
		{"dsa", "", false},
		{"ecdsa", "", false},
		{"rsa-4096", "", false},
	} {
		s := valid()
		if c.value != "" {
			s["ssh_key_type"] = c.value
		}
		d, err := Parse(s, "here")
		if c.ok {
			if err != nil || d.SSHKeyType != c.want {
				t.Errorf("ssh_key_type=%q: %v, %v; want %s", c.value, d, err, c.want)
			}
			continue
		}
		var cfgErr *Error
		if !errors.As(err, &cfgErr) || cfgErr.Key != "ssh_key_type" || !strings.Contains(cfgErr.Fix, `"ed25519" or "rsa"`) {
			t.Errorf("ssh_key_type=%q: error %v, want a *Error on ssh_key_type naming both types", c.value, err)
		}
	}
}

// The keys of this provisioner, and the reserved ssh_key_scope, are never
// reported as typos; near misses of them are.
func TestNewKeysAreKnown(t *testing.T) {
	got := UnknownKeys(map[string]string{"ssh_key_type": "rsa", "ssh_key_scope": "x", "ssh-key-type": "rsa", "ssh_key_scop": "x"})
	want := map[string]string{"ssh-key-type": "ssh_key_type", "ssh_key_scop": "ssh_key_scope"}
	if len(got) != len(want) || got["ssh-key-type"] != want["ssh-key-type"] || got["ssh_key_scop"] != want["ssh_key_scop"] {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestSSHKeyScope(t *testing.T) {
	for value, want := range map[string]string{"": KeyScopeVM, "vm": KeyScopeVM, " environment ": KeyScopeEnvironment, "env": "", "Environment": "", "vms": ""} {
		s := valid()
		s[KeySSHKeyScope] = value
		d, err := Parse(s, "here")
		if want != "" {
			if err != nil || d.SSHKeyScope != want {
				t.Errorf("ssh_key_scope=%q: %v, %v; want %s", value, d, err, want)
			}
			continue
		}
		var cfgErr *Error
		if !errors.As(err, &cfgErr) || cfgErr.Key != KeySSHKeyScope || !strings.Contains(cfgErr.Fix, `"environment"`) {
			t.Errorf("ssh_key_scope=%q: error %v, want a *Error on ssh_key_scope naming the scopes", value, err)
		}
	}
}

func TestWarmPool(t *testing.T) {
	for value, want := range map[string]int{"": 0, "0": 0, " 5 ": 5, "100": 100} {
		s := valid()
		s[KeyWarmPool] = value
		d, err := Parse(s, "here")
		if err != nil || d.WarmPool != want {
			t.Errorf("warm_pool=%q: %v, %v; want %d", value, d, err, want)
		}
	}
	if got := UnknownKeys(map[string]string{"warm_pool": "1", "warm-pool": "1"}); len(got) != 1 || got["warm-pool"] != KeyWarmPool {
		t.Errorf("unknown keys %v, want only warm-pool suggesting warm_pool", got)
	}
}

// TestWarmPoolAuto: "auto" sizes the pool within warm_pool_max (20 when
// unset); warm_pool_max is read with a size too, and only used with auto.
func TestWarmPoolAuto(t *testing.T) {
	for _, c := range []struct {
		pool, max string
		auto      bool
		size, top int
	}{
		{pool: "auto", auto: true, top: DefaultWarmPoolMax},
		{pool: " auto ", max: " 7 ", auto: true, top: 7},
		{pool: "auto", max: "100", auto: true, top: 100},
		{pool: "3", max: "7", size: 3, top: 7},
		{pool: "", top: DefaultWarmPoolMax},
	} {
		s := valid()
		s[KeyWarmPool] = c.pool
		if c.max != "" {
			s[KeyWarmPoolMax] = c.max
		}
		d, err := Parse(s, "here")
		if err != nil || d.WarmPoolAuto != c.auto || d.WarmPool != c.size || d.WarmPoolMax != c.top {
			t.Errorf("warm_pool=%q warm_pool_max=%q: %+v, %v; want auto %v, size %d, max %d", c.pool, c.max, d, err, c.auto, c.size, c.top)
		}
	}
	if got := UnknownKeys(map[string]string{"warm_pool_max": "5", "warm_pool_mx": "5"}); len(got) != 1 || got["warm_pool_mx"] != KeyWarmPoolMax {
		t.Errorf("unknown keys %v, want only warm_pool_mx suggesting warm_pool_max", got)
	}
}
