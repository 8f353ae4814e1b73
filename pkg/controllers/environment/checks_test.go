package environment

import (
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func testCatalog() *digitalocean.Catalog {
	return &digitalocean.Catalog{
		Regions: map[string]godo.Region{
			"nyc1": {Slug: "nyc1", Available: true, Sizes: []string{"s-1vcpu-1gb"}},
			"sfo3": {Slug: "sfo3", Available: true, Sizes: []string{"s-1vcpu-1gb", "s-8vcpu-16gb"}},
			"old1": {Slug: "old1", Available: false},
		},
		Sizes: map[string]godo.Size{
			"s-1vcpu-1gb":  {Slug: "s-1vcpu-1gb", Available: true, PriceMonthly: 6},
			"s-8vcpu-16gb": {Slug: "s-8vcpu-16gb", Available: true, PriceMonthly: 96},
		},
		Images: map[string]godo.Image{
			"ubuntu-22-04-x64": {Slug: "ubuntu-22-04-x64"},
			"debian-12-x64":    {Slug: "debian-12-x64"},
		},
		Fetched: time.Now(),
	}
}

func testLocator(specifics map[string]string, mapping map[string]string) locator {
	env := &hfv1.Environment{ObjectMeta: metav1.ObjectMeta{Name: "e"}, Spec: hfv1.EnvironmentSpec{
		EnvironmentSpecifics: specifics, TemplateMapping: map[string]map[string]string{"ubuntu": mapping}}}
	vmt := &hfv1.VirtualMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: "ubuntu"}, Spec: hfv1.VirtualMachineTemplateSpec{Image: "ubuntu-22-04-x64"}}
	return locator{env: env, vmt: vmt}
}

func TestCatalogProblemsNameTheKeyTheValueAndTheFix(t *testing.T) {
	ubuntu := godo.Image{Slug: "ubuntu-22-04-x64"}
	snapshot := godo.Image{ID: 42, Regions: []string{"sfo3"}}
	for _, c := range []struct {
		name                string
		region, size, image string
		found               *godo.Image
		want                []string // each in one problem's message, in order
		reason              string
	}{
		{"valid", "nyc1", "s-1vcpu-1gb", "ubuntu-22-04-x64", &ubuntu, nil, ""},
		{"unknown region", "mars1", "s-1vcpu-1gb", "ubuntu-22-04-x64", &ubuntu,
			[]string{`environment_specifics.region: "mars1" is not a DigitalOcean region; see GET /v2/regions`, "e.g. nyc1, sfo3"}, ReasonNotInCatalog},
		{"unavailable region", "old1", "s-1vcpu-1gb", "ubuntu-22-04-x64", &ubuntu,
			[]string{`environment_specifics.region: region "old1" takes no new droplets`}, ReasonNotInCatalog},
		{"unknown size", "nyc1", "s-9vcpu-1gb", "ubuntu-22-04-x64", &ubuntu,
			[]string{`template_mapping[ubuntu].size: "s-9vcpu-1gb" is not a DigitalOcean size; see GET /v2/sizes`, "e.g. s-1vcpu-1gb"}, ReasonNotInCatalog},
		{"size not in region", "nyc1", "s-8vcpu-16gb", "ubuntu-22-04-x64", &ubuntu,
			[]string{`template_mapping[ubuntu].size: size "s-8vcpu-16gb" is not offered in region "nyc1" (environment_specifics.region)`, "e.g. s-1vcpu-1gb", "a region that offers it, e.g. sfo3"}, ReasonNotInRegion},
		{"unknown image", "nyc1", "s-1vcpu-1gb", "ubuntu-99-04-x64", nil,
			[]string{`VirtualMachineTemplate ubuntu image: "ubuntu-99-04-x64" is not an image DigitalOcean has for this token`, "e.g. ubuntu-22-04-x64"}, ReasonNotInCatalog},
		{"image not in region", "nyc1", "s-1vcpu-1gb", "42", &snapshot,
			[]string{`image "42" is not available in region "nyc1"`, "e.g. sfo3"}, ReasonNotInRegion},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := testLocator(map[string]string{"region": c.region}, map[string]string{"size": c.size})
			l.vmt.Spec.Image = c.image
			cfg := &config.Droplet{Region: c.region, Size: c.size, Image: c.image}
			got := catalogProblems(testCatalog(), cfg, c.found, l)
			if len(c.want) == 0 {
				if len(got) != 0 {
					t.Fatalf("problems %v, want none", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("problems %v, want one", got)
			}
			for _, w := range c.want {
				if !strings.Contains(got[0].Message(), w) {
					t.Errorf("message %q lacks %q", got[0].Message(), w)
				}
			}
			if got[0].Reason != c.reason || got[0].Template != "ubuntu" || got[0].Advisory {
				t.Errorf("problem %+v, want reason %s on template ubuntu", got[0], c.reason)
			}
		})
	}
}

func TestLocateFollowsGargantuasOrder(t *testing.T) {
	l := testLocator(map[string]string{"region": "nyc1", "size": "x"}, map[string]string{"size": "y"})
	l.vmt.Spec.ConfigMap = map[string]string{"user_data": "u", "region": "r"}
	for key, want := range map[string]string{
		"size":         "template_mapping[ubuntu].size",
		"region":       "environment_specifics.region",
		"user_data":    "VirtualMachineTemplate ubuntu config_map.user_data",
		"image":        "VirtualMachineTemplate ubuntu image",
		"token-secret": "environment_specifics.token-secret",
	} {
		if got := l.locate(key); got != want {
			t.Errorf("%s is at %q, want %q", key, got, want)
		}
	}
	l.vmt.Spec.Image = ""
	if got := l.locate("image"); got != "template_mapping[ubuntu].image" {
		t.Errorf("a missing image is at %q, want template_mapping[ubuntu].image", got)
	}
}

func TestMisspelledKeysSuggestTheKnownOne(t *testing.T) {
	l := testLocator(map[string]string{"region": "nyc1", "token_secret": "do-token", "tokn": "dop_v1_secret"}, map[string]string{"size": "s-1vcpu-1gb"})
	got := map[string]string{}
	for _, p := range l.unknownKeys(config.Merge(l.env, l.vmt)) {
		if !p.Advisory || p.Reason != ReasonUnknownKey {
			t.Errorf("%+v: want an advisory %s", p, ReasonUnknownKey)
		}
		got[p.Location] = p.Message()
	}
	if m := got["environment_specifics.token_secret"]; !strings.Contains(m, `"do-token"`) || !strings.Contains(m, `did you mean "token-secret"?`) {
		t.Errorf("token_secret: %q, want the value and the key meant", m)
	}
	if m := got["environment_specifics.tokn"]; !strings.Contains(m, `did you mean "token"?`) || strings.Contains(m, "dop_v1") {
		t.Errorf("tokn: %q, want the key meant and never the token", m)
	}
}

func TestMeantForDigitalOcean(t *testing.T) {
	env := func(annotation, label string, specifics map[string]string) *hfv1.Environment {
		e := &hfv1.Environment{ObjectMeta: metav1.ObjectMeta{Name: "e", Annotations: map[string]string{}, Labels: map[string]string{}},
			Spec: hfv1.EnvironmentSpec{EnvironmentSpecifics: specifics, TemplateMapping: map[string]map[string]string{"t": {"image": "x"}}}}
		if annotation != "" {
			e.Annotations[ProvisionerAnnotation] = annotation
		}
		if label != "" {
			e.Labels[ProvisionerAnnotation] = label
		}
		return e
	}
	doKeys := map[string]string{"region": "nyc1", "size": "s-1vcpu-1gb", "image": "ubuntu-22-04-x64"}
	for _, c := range []struct {
		name string
		env  *hfv1.Environment
		want string // in the reason; "" for not meant for DigitalOcean
	}{
		{"annotated", env("digitalocean", "", doKeys), ""},
		{"label instead of annotation", env("", "digitalocean", nil), "label hobbyfarm.io/provisioner=digitalocean"},
		{"DigitalOcean keys, no annotation", env("", "", doKeys), `region "nyc1" and size "s-1vcpu-1gb"`},
		{"DigitalOcean keys, another provisioner", env("ec2", "", doKeys), `region "nyc1"`},
		{"token-secret and region", env("", "", map[string]string{"region": "ams3", "token-secret": "s"}), "token-secret"},
		{"a DigitalOcean token", env("", "", map[string]string{"token": "dop_v1_abc"}), "holds a DigitalOcean token"},
		{"AWS", env("", "", map[string]string{"region": "us-east-1", "size": "t3.micro", "image": "ami-123"}), ""},
		{"AWS provisioner", env("ec2", "", map[string]string{"region": "us-east-1", "token-secret": "aws"}), ""},
		{"Azure", env("", "", map[string]string{"region": "westeurope", "size": "Standard_B1s"}), ""},
		{"nothing", env("", "", nil), ""},
	} {
		got := meantForDigitalOcean(c.env)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	msg := notAnnotatedMessage(env("ec2", "", doKeys), "why")
	if !strings.Contains(msg, `names "ec2"`) || !strings.Contains(msg, "hobbyfarm.io/provisioner=digitalocean") {
		t.Errorf("message %q, want the other provisioner and the annotation to add", msg)
	}
}

// With several regions listed, a region that cannot serve is a warning
// while another can, and every region's problem an error when none can.
func TestEveryListedRegionIsChecked(t *testing.T) {
	ubuntu := godo.Image{Slug: "ubuntu-22-04-x64"}
	for _, c := range []struct {
		name, region, size string
		want               []string // one problem's text each, in order
		advisory           bool
	}{
		{"all serve", "nyc1,sfo3", "s-1vcpu-1gb", nil, false},
		{"one cannot", "nyc1,sfo3", "s-8vcpu-16gb", []string{`not offered in region "nyc1"`}, true},
		{"an unknown one", "mars1,sfo3", "s-1vcpu-1gb", []string{`"mars1" is not a DigitalOcean region`}, true},
		{"none can", "nyc1,old1", "s-8vcpu-16gb", []string{`not offered in region "nyc1"`, `region "old1" takes no new droplets`}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := testLocator(map[string]string{"region": c.region}, map[string]string{"size": c.size})
			got := catalogProblems(testCatalog(), &config.Droplet{Region: c.region, Size: c.size, Image: ubuntu.Slug}, &ubuntu, l)
			if len(got) != len(c.want) {
				t.Fatalf("problems %v, want %d", got, len(c.want))
			}
			for i, p := range got {
				told := strings.Contains(p.Text, "creates go to the other listed regions")
				if !strings.Contains(p.Text, c.want[i]) || p.Advisory != c.advisory || told != c.advisory {
					t.Errorf("problem %q (advisory %v), want %q, advisory %v", p.Message(), p.Advisory, c.want[i], c.advisory)
				}
			}
		})
	}
}
