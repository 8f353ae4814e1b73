package chart

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// monitoringOn turns on the dashboard and the alerts (and the metrics they need).
var monitoringOn = []string{"--set", "metrics.enabled=true,metrics.serviceMonitor.enabled=true,grafanaDashboard.enabled=true,prometheusRule.enabled=true"}

const dashboardFile = "dashboards/hf-provisioner-digitalocean.json"

func TestMonitoringLint(t *testing.T) {
	out := mustHelm(t, append([]string{"lint", "--strict", chartDir(t), "--namespace", "team-a"}, monitoringOn...)...)
	if !strings.Contains(out, "0 chart(s) failed") {
		t.Errorf("helm lint output:\n%s", out)
	}
}

func TestMonitoringRenders(t *testing.T) {
	ms := render(t, release, "team-a", monitoringOn...)
	for _, kind := range []string{"ConfigMap", "PrometheusRule", "ServiceMonitor"} {
		only(t, ms, kind)
	}
	decodeAll(t, ms)

	var cm corev1.ConfigMap
	only(t, ms, "ConfigMap").into(t, &cm)
	if cm.Labels["grafana_dashboard"] != "1" || cm.Namespace != "team-a" {
		t.Errorf("dashboard ConfigMap %s/%s labels %v: want grafana_dashboard=1 in the release namespace", cm.Namespace, cm.Name, cm.Labels)
	}
	file, err := os.ReadFile(filepath.Join(chartDir(t), dashboardFile))
	if err != nil {
		t.Fatal(err)
	}
	if got := cm.Data["hf-provisioner-digitalocean.json"]; strings.TrimSpace(got) != strings.TrimSpace(string(file)) {
		t.Errorf("the ConfigMap does not carry %s verbatim (Helm must not template it)", dashboardFile)
	}
	if !json.Valid([]byte(cm.Data["hf-provisioner-digitalocean.json"])) {
		t.Error("the dashboard in the ConfigMap is not valid JSON")
	}

	// Label and namespace follow the values; off by default.
	custom := render(t, release, "team-a", append(slices.Clone(monitoringOn), "--set",
		"grafanaDashboard.label=dashboards,grafanaDashboard.labelValue=hobbyfarm,grafanaDashboard.namespace=monitoring")...)
	cmc := only(t, custom, "ConfigMap").Obj
	if cmc.GetLabels()["dashboards"] != "hobbyfarm" || cmc.GetLabels()["grafana_dashboard"] != "" || cmc.GetNamespace() != "monitoring" {
		t.Errorf("custom label and namespace: got labels %v in %q", cmc.GetLabels(), cmc.GetNamespace())
	}
	for _, m := range render(t, release, "team-a", "--set", "metrics.enabled=true") {
		if k := m.Obj.GetKind(); k == "ConfigMap" || k == "PrometheusRule" {
			t.Errorf("%s rendered although grafanaDashboard and prometheusRule are off by default", m)
		}
	}
}

// dashboard is the part of Grafana's dashboard JSON the tests read.
type dashboard struct {
	UID        string  `json:"uid"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Datasource *datasource     `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	Title      string      `json:"title"`
	Type       string      `json:"type"`
	Datasource *datasource `json:"datasource"`
	Targets    []struct {
		Expr       string      `json:"expr"`
		Datasource *datasource `json:"datasource"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a collapsed row's
}

type datasource struct {
	UID string `json:"uid"`
}

func readDashboard(t *testing.T) dashboard {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(chartDir(t), dashboardFile))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s does not parse: %v", dashboardFile, err)
	}
	return d
}

func allPanels(ps []panel) []panel {
	var out []panel
	for _, p := range ps {
		out = append(out, p)
		out = append(out, allPanels(p.Panels)...)
	}
	return out
}

func TestDashboardQueriesNameExportedMetrics(t *testing.T) {
	d := readDashboard(t)
	exported := exportedMetrics(t)
	check := func(where, expr string) []string {
		t.Helper()
		names, err := metricNames(expr)
		if err != nil {
			t.Errorf("%s: %v", where, err)
			return nil
		}
		unknown, _ := unknownMetrics(expr, exported)
		if len(unknown) > 0 {
			t.Errorf("%s: query %q names metrics the controller does not export: %v", where, expr, unknown)
		}
		return names
	}

	if d.UID == "" {
		t.Error("the dashboard has no uid; Grafana would make a new one on every load")
	}
	// A datasource variable, used by every query.
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
		if v.Type == "query" {
			var q struct {
				Query string `json:"query"`
			}
			if err := json.Unmarshal(v.Query, &q); err != nil {
				var plain string
				if err := json.Unmarshal(v.Query, &plain); err != nil {
					t.Fatalf("variable %s: query %s", v.Name, v.Query)
				}
				q.Query = plain
			}
			check("variable "+v.Name, q.Query)
			if v.Datasource == nil || v.Datasource.UID != "${datasource}" {
				t.Errorf("variable %s does not use the datasource variable", v.Name)
			}
		}
	}
	if vars["datasource"] != "datasource" {
		t.Errorf("no datasource variable: %v", vars)
	}

	// Each panel the chart promises, with a metric it must show.
	want := map[string]string{
		"Droplets by state":                              "hf_do_droplets",
		"DigitalOcean requests by endpoint and code":     "hf_do_requests_total",
		"Rate-limit remaining":                           "hf_do_ratelimit_remaining",
		"Held-back requests":                             "hf_do_requests_held_back_total",
		"Time to running":                                "hf_do_provisioning_seconds_bucket",
		"Deletes pending":                                "hf_do_deletes_pending",
		"Orphans swept":                                  "hf_do_orphans_swept_total",
		"Environment validity":                           "hf_do_environment_config_valid",
		"Hourly cost by Environment and scheduled event": "hf_do_hourly_cost_dollars",
	}
	queries := 0
	for _, p := range allPanels(d.Panels) {
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q does not use the datasource variable", p.Title)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		var shown []string
		for _, target := range p.Targets {
			queries++
			shown = append(shown, check("panel "+p.Title, target.Expr)...)
		}
		if metric, ok := want[p.Title]; ok {
			if !slices.Contains(shown, metric) {
				t.Errorf("panel %q shows %v, want %s", p.Title, shown, metric)
			}
			delete(want, p.Title)
		}
	}
	for title := range want {
		t.Errorf("the dashboard lacks the panel %q", title)
	}
	if queries < 10 {
		t.Errorf("only %d queries checked", queries)
	}
}

// rule is one alert of the rendered PrometheusRule.
type rule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

func renderedRules(t *testing.T, args ...string) []rule {
	t.Helper()
	var pr struct {
		Spec struct {
			Groups []struct {
				Name  string `json:"name"`
				Rules []rule `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	m := only(t, render(t, release, "team-a", append(slices.Clone(monitoringOn), args...)...), "PrometheusRule")
	if err := yaml.Unmarshal(m.YAML, &pr); err != nil {
		t.Fatal(err)
	}
	var rules []rule
	for _, g := range pr.Spec.Groups {
		rules = append(rules, g.Rules...)
	}
	if len(rules) == 0 {
		t.Fatalf("the PrometheusRule has no rules:\n%s", m.YAML)
	}
	return rules
}

func TestAlertRulesNameExportedMetrics(t *testing.T) {
	exported := exportedMetrics(t)
	anchors := runbookAnchors(t)
	var alerts []string
	for _, r := range renderedRules(t) {
		alerts = append(alerts, r.Alert)
		unknown, err := unknownMetrics(r.Expr, exported)
		if err != nil {
			t.Errorf("%s: %v", r.Alert, err)
		} else if len(unknown) > 0 {
			t.Errorf("%s: expression %q names metrics the controller does not export: %v", r.Alert, r.Expr, unknown)
		}
		if !strings.Contains(r.Expr, `namespace="team-a",service="hf-provisioner-digitalocean-metrics"`) {
			t.Errorf("%s: expression %q is not limited to this release's series", r.Alert, r.Expr)
		}
		for _, a := range []string{"summary", "description"} {
			if strings.TrimSpace(r.Annotations[a]) == "" {
				t.Errorf("%s has no %s", r.Alert, a)
			}
		}
		if r.Labels["severity"] == "" {
			t.Errorf("%s has no severity", r.Alert)
		}
		base, anchor, ok := strings.Cut(r.Annotations["runbook_url"], "#")
		if !ok || base != "https://github.com/hobbyfarm/hf-provisioner-digitalocean/blob/main/docs/runbook.md" {
			t.Errorf("%s: runbook_url %q is not the runbook plus a section", r.Alert, r.Annotations["runbook_url"])
		} else if !anchors[anchor] {
			t.Errorf("%s: runbook_url anchor #%s is no heading of docs/runbook.md", r.Alert, anchor)
		}
	}
	sort.Strings(alerts)
	want := []string{"HfDoControllerNotReady", "HfDoDropletLimitNearlyReached", "HfDoDropletStuckDeleting", "HfDoEnvironmentInvalid",
		"HfDoOrphansFound", "HfDoRateLimitNearlySpent", "HfDoRateLimited", "HfDoVMStuckProvisioning"}
	if !slices.Equal(alerts, want) {
		t.Errorf("alerts = %v, want %v", alerts, want)
	}
}

func TestAlertValues(t *testing.T) {
	rules := map[string]rule{}
	for _, r := range renderedRules(t, "--set", "prometheusRule.thresholds.rateLimited429s=7,"+
		"prometheusRule.thresholds.rateLimitRemaining=250,prometheusRule.thresholds.stuckProvisioningMinutes=30,"+
		"prometheusRule.thresholds.stuckDeletingMinutes=4,prometheusRule.thresholds.notReadyMinutes=9,"+
		"prometheusRule.thresholds.dropletLimitPercent=75,"+
		"prometheusRule.runbookURL=https://wiki.example.com/hfdo,prometheusRule.alertLabels.team=hobbyfarm",
		"--set-string", `prometheusRule.selector=job="hfdo"`) {
		rules[r.Alert] = r
		if !strings.Contains(r.Expr, `{job="hfdo"`) || strings.Contains(r.Expr, "service=") {
			t.Errorf("%s: selector value not used: %q", r.Alert, r.Expr)
		}
		if !strings.HasPrefix(r.Annotations["runbook_url"], "https://wiki.example.com/hfdo#") {
			t.Errorf("%s: runbook_url %q ignores runbookURL", r.Alert, r.Annotations["runbook_url"])
		}
		if r.Labels["team"] != "hobbyfarm" {
			t.Errorf("%s: labels %v lack alertLabels", r.Alert, r.Labels)
		}
	}
	for alert, want := range map[string]string{
		"HfDoRateLimited":               ">= 7",
		"HfDoRateLimitNearlySpent":      "< 250)",
		"HfDoVMStuckProvisioning":       "> 1800",
		"HfDoDropletStuckDeleting":      "> 240",
		"HfDoDropletLimitNearlyReached": ">= 75",
	} {
		if !strings.Contains(rules[alert].Expr, want) {
			t.Errorf("%s: expression %q lacks the threshold %q", alert, rules[alert].Expr, want)
		}
	}
	if got := rules["HfDoControllerNotReady"].For; got != "9m" {
		t.Errorf("HfDoControllerNotReady for = %q, want 9m", got)
	}
}

var headingLine = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*$`)

// runbookAnchors returns the anchors GitHub makes for docs/runbook.md's headings:
// lowercase, punctuation other than - and _ dropped, spaces turned to -.
func runbookAnchors(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(chartDir(t), "..", "..", "docs", "runbook.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, m := range headingLine.FindAllStringSubmatch(string(data), -1) {
		anchors[githubAnchor(m[1])] = true
	}
	return anchors
}

func githubAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestGithubAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"429s (rate limited)": "429s-rate-limited",
		"VM stuck `provisioned` (droplet active, not reachable)": "vm-stuck-provisioned-droplet-active-not-reachable",
		"Controller not ready": "controller-not-ready",
	} {
		if got := githubAnchor(heading); got != want {
			t.Errorf("githubAnchor(%q) = %q, want %q", heading, got, want)
		}
	}
}

// TestREADMEAlertSelectorDefault renders the alerts of a release whose full name is
// not its release name and finds in them the default selector the chart README
// gives, with its placeholders filled in.
func TestREADMEAlertSelectorDefault(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(chartDir(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("\\| `prometheusRule.selector` \\| string \\| `\"\"` \\(`([^`]+)`").FindSubmatch(readme)
	if row == nil {
		t.Fatal("chart README gives no default for prometheusRule.selector")
	}
	ms := render(t, "hfdo", "team-a", monitoringOn...)
	fullname := only(t, ms, "Deployment").Obj.GetName()
	if fullname == "hfdo" {
		t.Fatalf("full name %q equals the release name: the test tells nothing apart", fullname)
	}
	want := strings.NewReplacer("<release namespace>", "team-a", "<fullname>", fullname).Replace(string(row[1]))
	if rule := only(t, ms, "PrometheusRule"); !strings.Contains(string(rule.YAML), "{"+want) {
		t.Errorf("README's default selector %s (here %s) is not the rendered one:\n%s", row[1], want, rule.YAML)
	}
}
