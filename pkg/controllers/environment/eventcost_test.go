package environment

import (
	"strings"
	"testing"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func costCheck(specifics map[string]string, mapping map[string]string, scope string) map[string]templateCheck {
	env := preflightEnv(specifics, map[string]map[string]string{"ubuntu": mapping})
	vmt := &hfv1.VirtualMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: "ubuntu"}}
	return map[string]templateCheck{"ubuntu": {cfg: &config.Droplet{SSHKeyScope: scope}, loc: locator{env: env, vmt: vmt}}}
}

func TestLargeEventAtPerVMKeysIsToldTheCost(t *testing.T) {
	uses := []eventUse{{event: "workshop", template: "ubuntu", count: 300}}
	got := costProblems(uses, costCheck(plainToken, nil, config.KeyScopeVM))
	if len(got) != 1 || got[0].Reason != ReasonPerVMKeyCost || !got[0].Advisory {
		t.Fatalf("problems %+v, want one advisory %s", got, ReasonPerVMKeyCost)
	}
	// 300 VMs: 2 requests each (key create, droplet create) is
	// 600 at 250 a minute; shared, 1 for the key and 30 multi-creates.
	for _, want := range []string{`environment_specifics.ssh_key_scope: scheduled event "workshop" asks for 300 VMs of template "ubuntu"`,
		"at least 600 DigitalOcean requests", "2.4 min of the token's 250 requests a minute",
		"with ssh_key_scope: environment (one key for the Environment, up to 10 droplets per create) it takes 31 requests, 7.4 s",
		"Set ssh_key_scope: environment in environment_specifics (every template) or template_mapping[ubuntu] before the event starts"} {
		if !strings.Contains(got[0].Message(), want) {
			t.Errorf("%q lacks %q", got[0].Message(), want)
		}
	}

	// Set to vm on purpose: the key to change is where it is set.
	got = costProblems(uses, costCheck(plainToken, map[string]string{"ssh_key_scope": "vm"}, config.KeyScopeVM))
	if len(got) != 1 || !strings.HasPrefix(got[0].Message(), "template_mapping[ubuntu].ssh_key_scope: ") ||
		!strings.Contains(got[0].Message(), `Set it to "environment"`) {
		t.Errorf("explicit vm: %+v, want the key where it is set", got)
	}
}

func TestSmallEventsAndSharedKeysAreNotWarned(t *testing.T) {
	for _, c := range []struct {
		name  string
		count int
		scope string
	}{
		{"at the threshold", LargeEventVMs, config.KeyScopeVM},
		{"shared key", 1000, config.KeyScopeEnvironment},
	} {
		if got := costProblems([]eventUse{{event: "e", template: "ubuntu", count: c.count}}, costCheck(plainToken, nil, c.scope)); len(got) != 0 {
			t.Errorf("%s: %+v, want none", c.name, got)
		}
	}
	// A template whose config does not resolve is reported by the config check.
	if got := costProblems([]eventUse{{event: "e", template: "debian", count: 1000}}, costCheck(plainToken, nil, config.KeyScopeVM)); len(got) != 0 {
		t.Errorf("unresolved template: %+v, want none", got)
	}
}

func TestCostIsWarnedOncePerEventAndTemplate(t *testing.T) {
	h, rec := newTestHandler()
	env := &hfv1.Environment{ObjectMeta: metav1.ObjectMeta{Name: "cost-env", Namespace: "ns", UID: "u3", Generation: 1},
		Spec: hfv1.EnvironmentSpec{TemplateMapping: map[string]map[string]string{"ubuntu": {}}}}
	checks := costCheck(plainToken, nil, config.KeyScopeVM)
	pass := func(uses ...eventUse) []string {
		h.report("ns/cost-env", env, &verdict{valid: map[string]bool{"ubuntu": true}, problems: costProblems(uses, checks)})
		return testutil.TakeEvents(rec)
	}
	got := pass(eventUse{event: "workshop", template: "ubuntu", count: 300})
	if len(got) != 2 || !hasEventWith(got, "Warning PerVMKeyCost", `"workshop" asks for 300 VMs`) || !hasEventWith(got, "Normal ConfigValid") {
		t.Fatalf("first pass: %q, want the cost Warning and ConfigValid (the cost leaves the config valid)", got)
	}
	if got := pass(eventUse{event: "workshop", template: "ubuntu", count: 300}); len(got) != 0 {
		t.Errorf("a resync: %q, want none", got)
	}
	if got := pass(eventUse{event: "workshop", template: "ubuntu", count: 400}); len(got) != 0 {
		t.Errorf("the same event asking for more: %q, want none", got)
	}
	if got := pass(eventUse{event: "workshop", template: "ubuntu", count: 400}, eventUse{event: "conference", template: "ubuntu", count: 60}); len(got) != 1 || !strings.Contains(got[0], `"conference" asks for 60 VMs`) {
		t.Errorf("another event: %q, want one Warning for it", got)
	}
}

func hasEventWith(events []string, parts ...string) bool {
	for _, e := range events {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(e, p)
		}
		if all {
			return true
		}
	}
	return false
}
