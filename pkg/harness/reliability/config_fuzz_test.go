package reliability

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What DigitalOcean accepts.
var (
	hostnameLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	doTag         = regexp.MustCompile(`^[a-zA-Z0-9_\-:]{1,255}$`)
	uuidRE        = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
)

// The keys a config.Error may name: Parse's own, and the tags key.
var configKeys = map[string]bool{
	config.KeyRegion: true, config.KeyImage: true, config.KeySize: true, config.KeyToken: true,
	config.KeyTokenSecret: true, config.KeyBackups: true, config.KeyIPv6: true, config.KeyMonitoring: true,
	config.KeyPrivateNetworking: true, config.KeyUserData: true, config.KeyTags: true, config.KeyVPCUUID: true,
	config.KeySSHUsername: true,
}

// resolve is the pure part of the controller's config resolution: Merge,
// Parse, then the names and tags the Droplet gets.
type resolved struct {
	cfg  *config.Droplet
	err  error
	name string
	tags []string
}

func resolveConfig(env *hfv1.Environment, vmt *hfv1.VirtualMachineTemplate, installation, namespace, vmName, uid string) resolved {
	cfg, err := config.Parse(config.Merge(env, vmt), fmt.Sprintf("Environment %q", env.Name))
	r := resolved{cfg: cfg, err: err, name: digitalocean.DropletName(vmName)}
	if err == nil {
		r.tags = digitalocean.DropletTags(installation, namespace, vmName, uid, cfg.Tags)
	}
	return r
}

// checkResolved is every property a resolution must have, valid or not.
func checkResolved(t *testing.T, what string, r resolved, vmName, uid string) {
	t.Helper()
	if !hostnameLabel.MatchString(r.name) {
		t.Errorf("%s: droplet name %q (from VM name %q) is not a hostname label", what, r.name, short(vmName))
	}
	if r.err != nil {
		var cfgErr *config.Error
		if !errors.As(r.err, &cfgErr) {
			t.Errorf("%s: error %T %v is not a *config.Error", what, r.err, r.err)
			return
		}
		if cfgErr.Key == "" || cfgErr.Fix == "" || !configKeys[cfgErr.Key] {
			t.Errorf("%s: config.Error %+v lacks a known Key or a Fix", what, short(fmt.Sprintf("%+v", *cfgErr)))
		}
		if !utf8.ValidString(cfgErr.Key) {
			t.Errorf("%s: key %q is not UTF-8", what, cfgErr.Key)
		}
		return
	}
	c := r.cfg
	for k, v := range map[string]string{"region": c.Region, "image": c.Image, "size": c.Size} {
		if v == "" || v != strings.TrimSpace(v) {
			t.Errorf("%s: valid config has %s %q", what, k, short(v))
		}
	}
	if (c.Token == "") == (c.TokenSecret == "") {
		t.Errorf("%s: valid config has token %q and token-secret %q: exactly one must be set", what, short(c.Token), short(c.TokenSecret))
	}
	if len(c.UserData) > config.MaxUserDataBytes {
		t.Errorf("%s: user_data of %d bytes accepted", what, len(c.UserData))
	}
	if c.VPCUUID != "" && !uuidRE.MatchString(c.VPCUUID) {
		t.Errorf("%s: vpc_uuid %q accepted", what, short(c.VPCUUID))
	}
	if c.SSHUsername == "" {
		t.Errorf("%s: empty ssh_username", what)
	}
	vmTags := 0
	for _, tag := range r.tags {
		if !doTag.MatchString(tag) {
			t.Errorf("%s: tag %q is not a valid DigitalOcean tag", what, short(tag))
		}
		if strings.HasPrefix(tag, digitalocean.VMTag("")) {
			vmTags++
			if tag != digitalocean.VMTag(uid) {
				// Another VM's identity tag: this droplet would be adopted by,
				// or deleted with, that VM.
				t.Errorf("%s: droplet carries %q, which names another VM (its own is %q)", what, short(tag), digitalocean.VMTag(uid))
			}
		}
	}
	if vmTags != 1 {
		t.Errorf("%s: %d tags name a VM, want exactly 1: %v", what, vmTags, r.tags)
	}
}

func short(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%s…(%d bytes)", s[:80], len(s))
	}
	return s
}

func environment(specifics map[string]string, mapping map[string]map[string]string) *hfv1.Environment {
	return &hfv1.Environment{ObjectMeta: metav1.ObjectMeta{Name: "env"},
		Spec: hfv1.EnvironmentSpec{EnvironmentSpecifics: specifics, TemplateMapping: mapping}}
}

func template(image string, configMap map[string]string) *hfv1.VirtualMachineTemplate {
	return &hfv1.VirtualMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: "tmpl"},
		Spec: hfv1.VirtualMachineTemplateSpec{Image: image, ConfigMap: configMap}}
}

const testUID = "6f1c2a9e-3b7d-4e2a-9c1f-0a1b2c3d4e5f"

func validSpecifics(kv ...string) map[string]string {
	m := map[string]string{"region": "nyc1", "size": "s-1vcpu-1gb", "token-secret": "do-token"}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// TestMalformedEnvironments feeds hand-picked bad Environments and VM names
// through config resolution.
func TestMalformedEnvironments(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	nonUTF8 := "nyc1\xff\xfe\x00"
	dotted253 := strings.TrimSuffix(strings.Repeat("abcdefghi.", 26), ".")[:253]
	cases := []struct {
		name      string
		specifics map[string]string
		mapping   map[string]string
		image     string
		vmName    string
		wantKey   string // "" when the config is valid
	}{
		{name: "empty", specifics: map[string]string{}, wantKey: "region"},
		{name: "nil maps", specifics: nil, wantKey: "region"},
		{name: "garbage keys only", specifics: map[string]string{"\xff\xfe": "\x00", "": "", strings.Repeat("k", 10000): huge}, wantKey: "region"},
		{name: "valid", specifics: validSpecifics(), image: "ubuntu-22-04-x64"},
		{name: "valid plain token", specifics: validSpecifics("token-secret", "", "token", "dop_v1_x"), image: "img"},
		{name: "whitespace region", specifics: validSpecifics("region", " \t\n"), image: "img", wantKey: "region"},
		{name: "non-UTF8 values", specifics: validSpecifics("region", nonUTF8, "size", "\xc3\x28"), image: "\xe2\x82", vmName: "vm\xff\xfe", wantKey: "region"},
		{name: "huge region", specifics: validSpecifics("region", huge), image: "img", wantKey: "region"},
		{name: "huge user_data", specifics: validSpecifics("user_data", huge), image: "img", wantKey: "user_data"},
		{name: "user_data at the limit", specifics: validSpecifics("user_data", strings.Repeat("y", config.MaxUserDataBytes)), image: "img"},
		{name: "non-UTF8 user_data", specifics: validSpecifics("user_data", "\xff#cloud-config"), image: "img"},
		{name: "both tokens", specifics: validSpecifics("token", "dop_v1_x"), image: "img", wantKey: "token-secret"},
		{name: "neither token", specifics: validSpecifics("token-secret", " "), image: "img", wantKey: "token-secret"},
		{name: "bool True", specifics: validSpecifics("backups", "True"), image: "img", wantKey: "backups"},
		{name: "bool non-UTF8", specifics: validSpecifics("ipv6", "\xff"), image: "img", wantKey: "ipv6"},
		{name: "bool huge", specifics: validSpecifics("monitoring", huge), image: "img", wantKey: "monitoring"},
		{name: "tags with space", specifics: validSpecifics("tags", "a,b c"), image: "img", wantKey: "tags"},
		{name: "tags non-UTF8", specifics: validSpecifics("tags", "ok,\xff"), image: "img", wantKey: "tags"},
		{name: "tag 256 chars", specifics: validSpecifics("tags", strings.Repeat("t", 256)), image: "img", wantKey: "tags"},
		{name: "tags only commas", specifics: validSpecifics("tags", ",,, ,"), image: "img"},
		{name: "tag 255 chars", specifics: validSpecifics("tags", strings.Repeat("t", 255)), image: "img"},
		{name: "tag naming another VM", specifics: validSpecifics("tags", digitalocean.VMTag("00000000-0000-0000-0000-000000000000")), image: "img"},
		{name: "tag naming this VM", specifics: validSpecifics("tags", digitalocean.VMTag(testUID)), image: "img"},
		{name: "vpc not a uuid", specifics: validSpecifics("vpc_uuid", "vpc-\xff"), image: "img", wantKey: "vpc_uuid"},
		{name: "template_mapping wins and breaks", specifics: validSpecifics(), mapping: map[string]string{"size": " "}, image: "img", wantKey: "size"},
		{name: "config_map image only", specifics: validSpecifics(), image: ""},
		{name: "VM name 253 with dots", specifics: validSpecifics(), image: "img", vmName: dotted253},
		{name: "VM name all dots", specifics: validSpecifics(), image: "img", vmName: strings.Repeat(".", 253)},
		{name: "VM name uppercase unicode", specifics: validSpecifics(), image: "img", vmName: "İSTANBUL-ÄÖÜ-ß-🙂"},
		{name: "VM name empty", specifics: validSpecifics(), image: "img", vmName: ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vmName := c.vmName
			if vmName == "" && c.name != "VM name empty" {
				vmName = "vm-1"
			}
			var mapping map[string]map[string]string
			if c.mapping != nil {
				mapping = map[string]map[string]string{"tmpl": c.mapping}
			}
			cm := map[string]string(nil)
			if c.name == "config_map image only" {
				cm = map[string]string{"image": "from-config-map"}
			}
			r := resolveConfig(environment(c.specifics, mapping), template(c.image, cm), "inst", "hobbyfarm", vmName, testUID)
			checkResolved(t, c.name, r, vmName, testUID)
			var cfgErr *config.Error
			switch {
			case c.wantKey == "" && r.err != nil:
				t.Errorf("want a valid config, got %v", short(r.err.Error()))
			case c.wantKey != "" && (!errors.As(r.err, &cfgErr) || cfgErr.Key != c.wantKey):
				t.Errorf("want an error naming %q, got %v", c.wantKey, r.err)
			}
		})
	}
}

// TestRandomEnvironments throws random layers of known and garbage keys
// with garbage values at config resolution; the properties of
// checkResolved must hold for every one.
func TestRandomEnvironments(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	valid := 0
	for i := 0; i < 5000; i++ {
		layer := func() map[string]string {
			if rng.IntN(4) == 0 {
				return nil
			}
			m := map[string]string{}
			for j := rng.IntN(8); j > 0; j-- {
				m[randomKey(rng)] = randomValue(rng)
			}
			return m
		}
		specifics := layer()
		if rng.IntN(2) == 0 {
			// Start from a valid layer so the valid paths are reached too.
			base := validSpecifics()
			for k, v := range specifics {
				if rng.IntN(3) == 0 {
					base[k] = v
				}
			}
			specifics = base
		}
		env := environment(specifics, map[string]map[string]string{"tmpl": layer(), "other": layer()})
		vmt := template(randomValue(rng), layer())
		vmName := randomVMName(rng)
		r := resolveConfig(env, vmt, randomValue(rng), randomValue(rng), vmName, testUID)
		what := fmt.Sprintf("case %d", i)
		checkResolved(t, what, r, vmName, testUID)
		if r.err == nil {
			valid++
		}
		if t.Failed() {
			t.Logf("%s: env %q template %q vm %q", what, short(fmt.Sprint(env.Spec)), short(fmt.Sprint(vmt.Spec)), short(vmName))
			return
		}
	}
	if valid < 50 {
		t.Errorf("only %d of 5000 random configs were valid: the generator does not reach the valid paths", valid)
	}
	t.Logf("%d of 5000 random configs valid", valid)
}

// FuzzResolve is the same check driven by go test -fuzz=FuzzResolve.
func FuzzResolve(f *testing.F) {
	f.Add("nyc1", "s-1vcpu-1gb", "img", "do-token", "", "a,b", "", "vm-1")
	f.Add(" ", "", "", "", "dop", "hfdo-vm:x", "true", strings.Repeat("a.", 126))
	f.Add("\xff", "\x00", "\xe2\x82", "t", "t", ",,", "True", "İ")
	f.Fuzz(func(t *testing.T, region, size, image, tokenSecret, token, tags, backups, vmName string) {
		env := environment(map[string]string{"region": region, "size": size, "token-secret": tokenSecret, "token": token, "tags": tags, "backups": backups}, nil)
		r := resolveConfig(env, template(image, nil), "inst", "ns", vmName, testUID)
		checkResolved(t, "fuzz", r, vmName, testUID)
	})
}

func randomKey(rng *rand.Rand) string {
	known := []string{"region", "image", "size", "token", "token-secret", "backups", "ipv6", "monitoring",
		"private_networking", "user_data", "tags", "vpc_uuid", "ssh_username", "Region", "regoin", "token_secret"}
	if rng.IntN(5) > 0 {
		return known[rng.IntN(len(known))]
	}
	return randomValue(rng)
}

func randomValue(rng *rand.Rand) string {
	switch rng.IntN(12) {
	case 0:
		return ""
	case 1:
		return " \t"
	case 2:
		return "true"
	case 3:
		return "nyc1"
	case 4:
		return "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"
	case 5:
		return strings.Repeat("x", rng.IntN(70000))
	case 6:
		return "a,b:c, d_e ,-"
	case 7:
		return digitalocean.VMTag(fmt.Sprint(rng.IntN(3))) + ",hobbyfarm-provisioner," + digitalocean.InstallationTag("other")
	case 8:
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return string(b)
	case 9:
		return "İ🙂\u200b\u0000ß"
	default:
		return fmt.Sprintf("v%d", rng.IntN(1000))
	}
}

func randomVMName(rng *rand.Rand) string {
	alphabet := "abcdefghijklmnopqrstuvwxyz0123456789-.ABC_\xff"
	n := 1 + rng.IntN(253)
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}
