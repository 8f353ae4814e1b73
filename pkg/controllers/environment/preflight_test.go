package environment

import (
	"strings"
	"testing"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	"github.com/rancher/wrangler/v3/pkg/generic"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// cached is a cache holding a fixed set of objects of one namespace.
type cached[T runtime.Object] struct {
	generic.CacheInterface[T]
	objs []T
}

func (c cached[T]) Get(_, name string) (T, error) {
	for _, o := range c.objs {
		if m, _ := meta.Accessor(o); m.GetName() == name {
			return o, nil
		}
	}
	var none T
	return none, apierrors.NewNotFound(schema.GroupResource{}, name)
}

func (c cached[T]) List(string, labels.Selector) ([]T, error) { return c.objs, nil }

// plainToken keeps the config from reading a Secret.
var plainToken = map[string]string{"region": "nyc1", "token": "dop_v1_test"}

func preflightHandler(events []*hfv1.ScheduledEvent, templates ...string) *handler {
	h, _ := newTestHandler()
	var vmts []*hfv1.VirtualMachineTemplate
	for _, t := range templates {
		vmts = append(vmts, &hfv1.VirtualMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: t, Namespace: "ns"},
			Spec: hfv1.VirtualMachineTemplateSpec{Image: "ubuntu-22-04-x64"}})
	}
	h.templates = cached[*hfv1.VirtualMachineTemplate]{objs: vmts}
	h.events = cached[*hfv1.ScheduledEvent]{objs: events}
	return h
}

func scheduledEvent(name string, finished bool, required map[string]map[string]int) *hfv1.ScheduledEvent {
	return &hfv1.ScheduledEvent{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec:   hfv1.ScheduledEventSpec{RequiredVirtualMachines: required},
		Status: hfv1.ScheduledEventStatus{Active: true, Finished: finished}}
}

func preflightEnv(specifics map[string]string, mapping map[string]map[string]string) *hfv1.Environment {
	return &hfv1.Environment{ObjectMeta: metav1.ObjectMeta{Name: "env", Namespace: "ns"},
		Spec: hfv1.EnvironmentSpec{EnvironmentSpecifics: specifics, TemplateMapping: mapping}}
}

// preflight runs the template checks as validate does, by message.
func preflight(t *testing.T, h *handler, env *hfv1.Environment) (map[string]Problem, map[string]templateCheck) {
	t.Helper()
	var missing []string
	for _, tmpl := range templates(env) {
		if _, err := h.templates.Get(env.Namespace, tmpl); err != nil {
			missing = append(missing, tmpl)
		}
	}
	uses, err := h.eventUses(env)
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string]templateCheck{}
	found, err := h.templateProblems(env, missing, uses, checks)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Problem{}
	for _, p := range found {
		out[p.Location] = p
	}
	return out, checks
}

func TestMappingKeyWithoutTemplateNamesItAndTheCloseSpelling(t *testing.T) {
	h := preflightHandler(nil, "ubuntu", "debian")
	env := preflightEnv(plainToken, map[string]map[string]string{"ubunut": {"size": "s-1vcpu-1gb"}, "centos": {}, "debian": {}})
	got, _ := preflight(t, h, env)
	if len(got) != 2 {
		t.Fatalf("problems %v, want one per key without a template", got)
	}
	typo := got["template_mapping[ubunut]"]
	if typo.Reason != ReasonUnknownTemplate || typo.Advisory || !strings.Contains(typo.Message(), `names no VirtualMachineTemplate in namespace ns`) ||
		!strings.Contains(typo.Message(), `did you mean "ubuntu"? Rename the key to "ubuntu"`) {
		t.Errorf("typo: %+v, want a %s naming the key and ubuntu", typo, ReasonUnknownTemplate)
	}
	if m := got["template_mapping[centos]"].Message(); !strings.Contains(m, `create VirtualMachineTemplate "centos"`) || strings.Contains(m, "did you mean") {
		t.Errorf("no close template: %q, want the template to create and no guess", m)
	}
}

func TestEventTemplateWithoutMappingSaysWhatItsVMsGet(t *testing.T) {
	events := []*hfv1.ScheduledEvent{
		scheduledEvent("workshop", false, map[string]map[string]int{"env": {"ubuntu": 3, "debian": 2, "mapped": 1}, "other-env": {"centos": 9}}),
		scheduledEvent("next-week", false, map[string]map[string]int{"env": {"debian": 4}}),
		// Finished: needs nothing.
		scheduledEvent("last-year", true, map[string]map[string]int{"env": {"centos": 5}}),
	}
	h := preflightHandler(events, "ubuntu", "debian", "mapped", "centos")
	env := preflightEnv(with(plainToken, "size", "s-1vcpu-1gb"), map[string]map[string]string{"ubunut": {}, "mapped": {}})
	got, checks := preflight(t, h, env)

	ubuntu := got["template_mapping[ubuntu]"]
	if ubuntu.Reason != ReasonTemplateNotMapped || ubuntu.Advisory {
		t.Errorf("ubuntu: %+v, want a %s that leaves the config invalid", ubuntu, ReasonTemplateNotMapped)
	}
	for _, want := range []string{`is missing, but scheduled event "workshop" (3 VMs) uses template "ubuntu"`, "get none",
		"did you mean template_mapping[ubunut], which names no VirtualMachineTemplate? Rename that key to \"ubuntu\""} {
		if !strings.Contains(ubuntu.Message(), want) {
			t.Errorf("ubuntu: %q lacks %q", ubuntu.Message(), want)
		}
	}
	debian := got["template_mapping[debian]"].Message()
	for _, want := range []string{`scheduled events "next-week" (4 VMs), "workshop" (2 VMs) use template "debian"`,
		`add template_mapping[debian]: an empty entry is enough, and its VMs get image "ubuntu-22-04-x64", size "s-1vcpu-1gb", region "nyc1" from environment_specifics and the template`} {
		if !strings.Contains(debian, want) {
			t.Errorf("debian: %q lacks %q", debian, want)
		}
	}
	if c, ok := checks["debian"]; !ok || c.cfg.Size != "s-1vcpu-1gb" {
		t.Errorf("debian's config with an empty entry: %+v, want it resolved for the cost check", c)
	}
	if _, ok := got["template_mapping[centos]"]; ok {
		t.Errorf("centos: %v; want nothing: only a finished event and another Environment use it", got["template_mapping[centos]"])
	}
	if len(got) != 3 {
		t.Errorf("problems %v, want ubunut, ubuntu and debian", got)
	}

	// environment_specifics alone leaves the size out: say which key to add.
	env.Spec.EnvironmentSpecifics = plainToken
	got, checks = preflight(t, h, env)
	if m := got["template_mapping[debian]"].Message(); !strings.Contains(m, "add template_mapping[debian] with what environment_specifics and the template leave out (template_mapping[debian].size: is missing") {
		t.Errorf("debian without a size: %q, want the key to add", m)
	}
	if _, ok := checks["debian"]; ok {
		t.Errorf("an invalid config went to the cost check")
	}
}

func TestNoTemplateProblemsWhenMappingAndEventsMatch(t *testing.T) {
	events := []*hfv1.ScheduledEvent{scheduledEvent("workshop", false, map[string]map[string]int{"env": {"ubuntu": 300}})}
	h := preflightHandler(events, "ubuntu", "debian")
	env := preflightEnv(with(plainToken, "size", "s-1vcpu-1gb"), map[string]map[string]string{"ubuntu": {}, "debian": {}})
	if got, _ := preflight(t, h, env); len(got) != 0 {
		t.Errorf("problems %v, want none", got)
	}
}

func with(base map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func TestMissingTemplateHoldsBackConfigValid(t *testing.T) {
	h, rec := newTestHandler()
	env := &hfv1.Environment{ObjectMeta: metav1.ObjectMeta{Name: "typo-env", Namespace: "ns", UID: "u4", Generation: 1},
		Spec: hfv1.EnvironmentSpec{TemplateMapping: map[string]map[string]string{"ubunut": {}}}}
	typo := unknownTemplate(env, "ubunut", []string{"ubuntu"})
	pass := func(problems ...Problem) []string {
		h.report("ns/typo-env", env, &verdict{valid: map[string]bool{"ubunut": true}, problems: problems})
		return testutil.TakeEvents(rec)
	}
	if got := pass(typo); len(got) != 1 || !strings.Contains(got[0], "Warning UnknownTemplate template_mapping[ubunut]") {
		t.Errorf("typo: %q, want only its Warning, no ConfigValid", got)
	}
	// The template is created: the check passes.
	if got := pass(); len(got) != 1 || !strings.HasPrefix(got[0], "Normal ConfigValid") {
		t.Errorf("template created: %q, want ConfigValid", got)
	}
}
