package environment

import (
	"strings"
	"testing"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
)

func newTestHandler() (*handler, *record.FakeRecorder) {
	rec := record.NewFakeRecorder(100)
	return &handler{recorder: rec, reported: map[string]*report{}}, rec
}

// gauge is the metric's value, or -1 when the series does not exist.
func gauge(t *testing.T, env, template string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "hf_do_environment_config_valid" {
			continue
		}
		for _, m := range f.GetMetric() {
			if label(m, "environment") == env && label(m, "template") == template {
				return m.GetGauge().GetValue()
			}
		}
	}
	return -1
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func TestEventsOnlyOnTransitions(t *testing.T) {
	h, rec := newTestHandler()
	env := &hfv1.Environment{ObjectMeta: metav1.ObjectMeta{Name: "report-env", Namespace: "ns", UID: "u1", Generation: 1},
		Spec: hfv1.EnvironmentSpec{TemplateMapping: map[string]map[string]string{"ubuntu": {}, "debian": {}}}}
	size := Problem{Template: "ubuntu", Location: "template_mapping[ubuntu].size", Text: `"s-9" is not a DigitalOcean size`, Reason: ReasonNotInCatalog}
	region := Problem{Template: "ubuntu", Location: "environment_specifics.region", Text: `"mars1" is not a DigitalOcean region`, Reason: ReasonNotInCatalog}
	regionAgain := region
	regionAgain.Template = "debian"
	pass := func(valid map[string]bool, problems ...Problem) []string {
		h.report("ns/report-env", env, &verdict{valid: valid, problems: problems})
		return testutil.TakeEvents(rec)
	}

	if got := pass(map[string]bool{"ubuntu": false, "debian": true}, size); len(got) != 1 || !strings.Contains(got[0], "Warning NotInCatalog template_mapping[ubuntu].size") {
		t.Fatalf("first problem: events %q, want one Warning", got)
	}
	if gauge(t, "report-env", "ubuntu") != 0 || gauge(t, "report-env", "debian") != 1 {
		t.Errorf("metric ubuntu=%v debian=%v, want 0 and 1", gauge(t, "report-env", "ubuntu"), gauge(t, "report-env", "debian"))
	}
	if got := pass(map[string]bool{"ubuntu": false, "debian": true}, size); len(got) != 0 {
		t.Errorf("same problems again (a resync): events %q, want none", got)
	}
	// The same problem through two templates is one Event.
	if got := pass(map[string]bool{"ubuntu": false, "debian": false}, size, region, regionAgain); len(got) != 1 || !strings.Contains(got[0], "mars1") {
		t.Errorf("a new problem: events %q, want one Warning for it", got)
	}
	// DigitalOcean unreachable for ubuntu: its last verdict stands, no news.
	if got := pass(map[string]bool{"debian": false}, regionAgain); len(got) != 0 || gauge(t, "report-env", "ubuntu") != 0 {
		t.Errorf("ubuntu unchecked: events %q, metric %v; want none and 0", got, gauge(t, "report-env", "ubuntu"))
	}
	if got := pass(map[string]bool{"ubuntu": false, "debian": false}, size, region, regionAgain); len(got) != 0 {
		t.Errorf("ubuntu checked again, same problems: events %q, want none", got)
	}
	got := pass(map[string]bool{"ubuntu": true, "debian": true})
	if len(got) != 1 || !strings.HasPrefix(got[0], "Normal ConfigValid") {
		t.Errorf("fixed: events %q, want one Normal ConfigValid", got)
	}
	if gauge(t, "report-env", "ubuntu") != 1 || gauge(t, "report-env", "debian") != 1 {
		t.Errorf("fixed: metric ubuntu=%v debian=%v, want 1 and 1", gauge(t, "report-env", "ubuntu"), gauge(t, "report-env", "debian"))
	}
	if got := pass(map[string]bool{"ubuntu": true, "debian": true}); len(got) != 0 {
		t.Errorf("still valid: events %q, want none", got)
	}
	// A problem coming back is news again.
	if got := pass(map[string]bool{"ubuntu": false, "debian": true}, size); len(got) != 1 {
		t.Errorf("broken again: events %q, want one Warning", got)
	}

	delete(env.Spec.TemplateMapping, "debian")
	pass(map[string]bool{"ubuntu": false}, size)
	if v := gauge(t, "report-env", "debian"); v != -1 {
		t.Errorf("template gone: its series is %v, want deleted", v)
	}
	h.forget("ns/report-env")
	if v := gauge(t, "report-env", "ubuntu"); v != -1 {
		t.Errorf("Environment gone: its series is %v, want deleted", v)
	}
}

func TestNotAnnotatedWarnsOnce(t *testing.T) {
	h, rec := newTestHandler()
	env := &hfv1.Environment{ObjectMeta: metav1.ObjectMeta{Name: "label-env", Namespace: "ns", UID: "u2",
		Labels: map[string]string{ProvisionerAnnotation: ProvisionerName}},
		Spec: hfv1.EnvironmentSpec{TemplateMapping: map[string]map[string]string{"ubuntu": {}}}}
	for range 3 {
		h.reportNotAnnotated("ns/label-env", env)
	}
	if got := testutil.TakeEvents(rec); len(got) != 1 || !strings.Contains(got[0], "Warning NotAnnotated") || !strings.Contains(got[0], "hobbyfarm.io/provisioner=digitalocean") {
		t.Errorf("events %q, want one Warning naming the annotation", got)
	}
	if v := gauge(t, "label-env", "ubuntu"); v != 0 {
		t.Errorf("metric %v, want 0", v)
	}
	// No longer looking meant for DigitalOcean: not ours, no series.
	env.Labels = nil
	h.reportNotAnnotated("ns/label-env", env)
	if v := gauge(t, "label-env", "ubuntu"); v != -1 || len(testutil.TakeEvents(rec)) != 0 {
		t.Errorf("metric %v, want no series and no Event", v)
	}
}
