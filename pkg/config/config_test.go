package config

import (
	"errors"
	"strings"
	"testing"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
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
