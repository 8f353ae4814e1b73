package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// envCheck is one mistake an operator makes in an Environment, which the
// Environment itself reports, with no VM, the moment it is saved.
type envCheck struct {
	name      string
	specifics map[string]string
	mapping   map[string]map[string]string
	// unannotated: the Environment has the provisioner as a label instead.
	unannotated bool
	setup       func(w *world)
	// want are all in one Warning Event: the key, the value and the fix.
	want []string
	// fix returns the Environment as the test last wrote it.
	fix func(w *world, env *hfv1.Environment) *hfv1.Environment
}

func TestEnvironmentIsCheckedBeforeAnyVM(t *testing.T) {
	editEnv := func(change func(env *hfv1.Environment)) func(w *world, env *hfv1.Environment) *hfv1.Environment {
		return func(w *world, env *hfv1.Environment) *hfv1.Environment { return w.editEnv(env.Name, change) }
	}
	cases := []envCheck{
		{name: "label-not-annotation", unannotated: true,
			want: []string{"Warning NotAnnotated", "label hobbyfarm.io/provisioner=digitalocean", "kubectl annotate --overwrite environment envcheck-label-not-annotation hobbyfarm.io/provisioner=digitalocean"},
			fix: editEnv(func(env *hfv1.Environment) {
				env.Annotations = map[string]string{gargantuasim.ProvisionerKey: "digitalocean"}
			})},
		{name: "token-secret-misspelt", specifics: map[string]string{"region": "nyc1", "token_secret": tokenSecret},
			want: []string{"Warning UnknownConfigKey", `environment_specifics.token_secret: "do-token"`, `did you mean "token-secret"?`},
			fix: editEnv(func(env *hfv1.Environment) {
				env.Spec.EnvironmentSpecifics = map[string]string{"region": "nyc1", "token-secret": tokenSecret}
			})},
		{name: "revoked-token", specifics: with(validSpecifics, "token-secret", "revoked"),
			setup: func(w *world) {
				if _, err := w.hf.Secrets.Create(gargantuasim.TokenSecret(w.ns, "revoked", "dop_v1_revoked")); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"Warning TokenRejected", "environment_specifics.token-secret", `Secret "revoked", key "token"`, "401", "revoked", "https://cloud.digitalocean.com/account/api/tokens"},
			// A new token in the same Secret: its watch re-checks the Environment.
			fix: func(w *world, env *hfv1.Environment) *hfv1.Environment {
				s := w.secret("revoked")
				s.Data["token"] = []byte(testToken)
				if _, err := w.hf.Secrets.Update(s); err != nil {
					t.Fatal(err)
				}
				return env
			}},
		{name: "size-not-in-region", mapping: map[string]map[string]string{"ubuntu": {"size": "s-8vcpu-16gb"}},
			want: []string{"Warning NotInRegion", `template_mapping[ubuntu].size: size "s-8vcpu-16gb" is not offered in region "nyc1" (environment_specifics.region)`, "e.g. s-1vcpu-512mb-10gb", "a region that offers it, e.g. sfo3"},
			fix:  editEnv(func(env *hfv1.Environment) { env.Spec.EnvironmentSpecifics["region"] = "sfo3" })},
		{name: "image-does-not-exist", mapping: map[string]map[string]string{"ubuntu": {"size": "s-1vcpu-1gb", "image": "ubuntu-99-04-x64"}},
			want: []string{"Warning NotInCatalog", `template_mapping[ubuntu].image: "ubuntu-99-04-x64" is not an image DigitalOcean has`, "GET /v2/images?type=distribution", "e.g. ubuntu-20-04-x64"},
			fix:  editEnv(func(env *hfv1.Environment) { delete(env.Spec.TemplateMapping["ubuntu"], "image") })},
		{name: "unknown-region", specifics: with(validSpecifics, "region", "mars1"),
			want: []string{"Warning NotInCatalog", `environment_specifics.region: "mars1" is not a DigitalOcean region`, "GET /v2/regions", "e.g. ams3"},
			fix:  editEnv(func(env *hfv1.Environment) { env.Spec.EnvironmentSpecifics["region"] = "ams3" })},
		{name: "missing-size", mapping: map[string]map[string]string{"ubuntu": {}},
			want: []string{"Warning InvalidConfig", `template_mapping[ubuntu].size: is missing`, `set it to a DigitalOcean size slug (e.g. "s-1vcpu-1gb")`},
			fix: editEnv(func(env *hfv1.Environment) {
				env.Spec.TemplateMapping["ubuntu"] = map[string]string{"size": "s-1vcpu-1gb"}
			})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			runEnvCheck(t, c)
		})
	}
}

func runEnvCheck(t *testing.T, c envCheck) {
	addr := freeAddr(t)
	w := newWorld(t, worldOptions{metricsAddr: addr, fake: fakedo.Options{
		// Offered in San Francisco only.
		ExtraSizes: []godo.Size{{Slug: "s-8vcpu-16gb", Memory: 16384, Vcpus: 8, Disk: 320, PriceMonthly: 96, PriceHourly: 0.14286,
			Available: true, Regions: []string{"sfo3"}, Description: "Basic"}},
	}})
	w.createUbuntuTemplate()
	if c.setup != nil {
		c.setup(w)
	}
	name := "envcheck-" + c.name
	env := w.caseEnvironment(name, c.specifics, c.mapping)
	if c.unannotated {
		env.Annotations = nil
		env.Labels = map[string]string{gargantuasim.ProvisionerKey: "digitalocean"}
	}
	env = w.createEnv(env)
	metric := fmt.Sprintf(`hf_do_environment_config_valid\{environment="%s",template="ubuntu"\}`, name)

	w.eventually(10*time.Second, "Warning on the Environment", func() string {
		return w.envEventWith(name, c.want...)
	})
	w.eventually(5*time.Second, "metric 0", func() string { return metricIs(t, addr, metric, 0) })
	if n := w.eventCount("Environment", name, "Normal ConfigValid"); n != 0 {
		t.Errorf("%d ConfigValid Events while invalid", n)
	}
	w.unchangedByUs(env)

	written := c.fix(w, env)
	w.eventually(10*time.Second, "Normal ConfigValid once fixed", func() string {
		return w.envEventWith(name, "Normal ConfigValid")
	})
	w.eventually(5*time.Second, "metric 1", func() string { return metricIs(t, addr, metric, 1) })
	w.unchangedByUs(written)
	if n := w.eventCount("Environment", name, c.want[0]); n != 1 {
		t.Errorf("%q recorded %d times, want once", c.want[0], n)
	}
	if vms, err := w.hf.VMs.List(w.ns, metav1.ListOptions{}); err != nil || len(vms.Items) != 0 {
		t.Errorf("VMs: %v, %v; want none: the Environment is checked on its own", vms, err)
	}
}

// A handful of requests per token an hour, however many Environments share
// it and however often they are edited: the catalog and account check are
// cached per token.
func TestCatalogCostsAHandfulOfRequestsPerToken(t *testing.T) {
	w := newWorld(t, worldOptions{})
	w.createUbuntuTemplate()
	var names []string
	written := map[string]*hfv1.Environment{}
	for i := range 5 {
		name := fmt.Sprintf("envcost-%d", i)
		names = append(names, name)
		written[name] = w.createEnv(gargantuasim.Environment(w.ns, name, with(validSpecifics), validMapping))
	}
	for _, name := range names {
		w.eventually(10*time.Second, name+" valid", func() string { return w.envEventWith(name, "Normal ConfigValid") })
	}
	// Break and fix each: two edits each, each checked.
	for _, name := range names {
		w.editEnv(name, func(env *hfv1.Environment) { env.Spec.EnvironmentSpecifics["region"] = "mars1" })
	}
	for _, name := range names {
		w.eventually(10*time.Second, name+" broken", func() string { return w.envEventWith(name, `"mars1" is not a DigitalOcean region`) })
		written[name] = w.editEnv(name, func(env *hfv1.Environment) { env.Spec.EnvironmentSpecifics["region"] = "nyc1" })
	}
	for _, name := range names {
		w.eventually(10*time.Second, name+" valid again", func() string {
			if n := w.eventCount("Environment", name, "Normal ConfigValid"); n != 2 {
				return fmt.Sprintf("%d ConfigValid Events, want 2", n)
			}
			return ""
		})
	}
	counts := map[string]int{}
	total := 0
	for _, route := range []string{fakedo.RouteAccount, fakedo.RouteListRegions, fakedo.RouteListSizes, fakedo.RouteListImages, fakedo.RouteGetImage} {
		counts[route] = w.do.RouteRequests(route)
		total += counts[route]
	}
	if counts[fakedo.RouteListRegions] != 1 || counts[fakedo.RouteListSizes] != 1 || counts[fakedo.RouteListImages] != 1 || counts[fakedo.RouteAccount] > 2 || total > 5 {
		t.Errorf("catalog requests for 5 Environments and 10 edits: %v, want each list once and at most 2 account checks", counts)
	}
	for _, name := range names {
		w.unchangedByUs(written[name])
	}
}

func (w *world) env(name string) *hfv1.Environment {
	w.t.Helper()
	env, err := w.hf.Envs.Get(w.ns, name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return env
}

// editEnv changes an Environment and returns it as written.
func (w *world) editEnv(name string, change func(env *hfv1.Environment)) *hfv1.Environment {
	w.t.Helper()
	var updated *hfv1.Environment
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		env := w.env(name)
		change(env)
		var err error
		updated, err = w.hf.Envs.Update(env)
		return err
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return updated
}

// envEventWith is "" once one Event on the Environment holds every part.
func (w *world) envEventWith(name string, parts ...string) string {
	events := w.events("Environment", name)
	for _, e := range events {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(e, p)
		}
		if all {
			return ""
		}
	}
	return fmt.Sprintf("no Event with %q among %q", parts, events)
}

// unchangedByUs fails if the Environment moved on from the version the test
// last wrote: the controller reports with Events, never on the Environment.
func (w *world) unchangedByUs(written *hfv1.Environment) {
	w.t.Helper()
	if now := w.env(written.Name); now.ResourceVersion != written.ResourceVersion {
		w.t.Errorf("Environment %s was written by someone but the test: resourceVersion %s → %s", written.Name, written.ResourceVersion, now.ResourceVersion)
	}
}

// metricIs is "" once the sample matching pattern has the value want.
func metricIs(t *testing.T, addr, pattern string, want float64) string {
	m := regexp.MustCompile(`(?m)^` + pattern + ` ([0-9.e+-]+)$`).FindStringSubmatch(scrape(t, addr))
	if m == nil {
		return "no sample " + pattern
	}
	if v, err := strconv.ParseFloat(m[1], 64); err != nil || v != want {
		return fmt.Sprintf("%s is %s, want %v", pattern, m[1], want)
	}
	return ""
}
