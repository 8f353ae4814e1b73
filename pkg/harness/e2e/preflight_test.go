package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// The Environment check compares template_mapping with the namespace's
// templates and with the scheduled events that use the Environment, and
// tells a large event at per-VM keys what its creates cost, before any VM.
func TestEnvironmentPreflightWarnings(t *testing.T) {
	// Its events ask for up to 714 VMs: an account that holds them keeps
	// the droplet limit check quiet.
	w := newWorld(t, worldOptions{dropletLimit: 1000})
	for _, tmpl := range []*hfv1.VirtualMachineTemplate{
		gargantuasim.Template(w.ns, "ubuntu", "ubuntu-22-04-x64", nil),
		gargantuasim.Template(w.ns, "debian", "debian-12-x64", map[string]string{"size": "s-1vcpu-512mb-10gb"}),
	} {
		if _, err := w.hf.Templates.Create(tmpl); err != nil {
			t.Fatal(err)
		}
	}
	const within = 20 * time.Second

	// A misspelt template_mapping key: named, with the template meant.
	w.createEnv(gargantuasim.Environment(w.ns, "typo", with(validSpecifics), map[string]map[string]string{"ubunut": {"size": "s-1vcpu-1gb"}}))
	w.eventually(within, "UnknownTemplate on typo", func() string {
		return w.envEventWith("typo", "Warning UnknownTemplate", "template_mapping[ubunut]", `did you mean "ubuntu"?`)
	})
	if n := w.eventCount("Environment", "typo", "Normal ConfigValid"); n != 0 {
		t.Errorf("typo: %d ConfigValid Events while its key names no template", n)
	}
	w.editEnv("typo", func(env *hfv1.Environment) {
		env.Spec.TemplateMapping = map[string]map[string]string{"ubuntu": env.Spec.TemplateMapping["ubunut"]}
	})
	w.eventually(within, "ConfigValid on typo once renamed", func() string { return w.envEventWith("typo", "Normal ConfigValid") })

	// An event created after the check uses a template the Environment does
	// not map: its watch re-checks the Environment.
	w.createEnv(gargantuasim.Environment(w.ns, "unmapped", with(validSpecifics), validMapping))
	w.eventually(within, "ConfigValid on unmapped", func() string { return w.envEventWith("unmapped", "Normal ConfigValid") })
	w.startEvent("workshop", map[string]map[string]int{"unmapped": {"ubuntu": 2, "debian": 2}})
	w.eventually(within, "TemplateNotMapped on unmapped", func() string {
		return w.envEventWith("unmapped", "Warning TemplateNotMapped", "template_mapping[debian]: is missing", `scheduled event "workshop" (2 VMs)`,
			`an empty entry is enough, and its VMs get image "debian-12-x64", size "s-1vcpu-512mb-10gb"`)
	})
	// The event no longer names the Environment: valid again.
	w.editEvent("workshop", func(e *hfv1.ScheduledEvent) { delete(e.Spec.RequiredVirtualMachines, "unmapped") })
	w.eventually(within, "ConfigValid on unmapped once the event drops it", func() string {
		if n := w.eventCount("Environment", "unmapped", "Normal ConfigValid"); n != 2 {
			return fmt.Sprintf("%d ConfigValid Events, want 2", n)
		}
		return ""
	})

	// An event whose mapping and key scope match: created before the large
	// one, so the cache holds it once the large one is warned about.
	w.startEvent("fine", map[string]map[string]int{"matching": {"ubuntu": 300, "debian": 10}})
	w.createEnv(gargantuasim.Environment(w.ns, "large", with(validSpecifics), validMapping))
	w.startEvent("big", map[string]map[string]int{"large": {"ubuntu": 300}})
	cost := []string{"Warning PerVMKeyCost", `scheduled event "big" asks for 300 VMs of template "ubuntu"`,
		"2.4 min of the token's 250 requests a minute", "7.4 s", "Set ssh_key_scope: environment"}
	w.eventually(within, "PerVMKeyCost on large", func() string { return w.envEventWith("large", cost...) })

	// The event asks for more, and for a template not mapped: the new
	// Warning shows a later check, which does not repeat the cost.
	w.editEvent("big", func(e *hfv1.ScheduledEvent) {
		e.Spec.RequiredVirtualMachines["large"] = map[string]int{"ubuntu": 400, "centos": 1}
	})
	w.eventually(within, "TemplateNotMapped on large after the event's edit", func() string {
		return w.envEventWith("large", "Warning TemplateNotMapped", "template_mapping[centos]", `"big" (1 VM)`)
	})
	if n := w.eventCount("Environment", "large", "Warning PerVMKeyCost"); n != 1 {
		t.Errorf("large: PerVMKeyCost recorded %d times, want once per event and template", n)
	}

	// Mapping and events match, ssh_key_scope environment (debian's 10 VMs
	// keep per-VM keys: too few to matter): no Warning at all.
	w.createEnv(gargantuasim.Environment(w.ns, "matching", with(validSpecifics, "ssh_key_scope", "environment"),
		map[string]map[string]string{"ubuntu": {"size": "s-1vcpu-1gb"}, "debian": {"ssh_key_scope": "vm"}}))
	w.eventually(within, "ConfigValid on matching", func() string { return w.envEventWith("matching", "Normal ConfigValid") })
	for _, e := range w.events("Environment", "matching") {
		if strings.HasPrefix(e, "Warning") {
			t.Errorf("matching: %q, want no Warning", e)
		}
	}
}

// startEvent creates an active scheduled event, as Gargantua does.
func (w *world) startEvent(name string, required map[string]map[string]int) {
	w.t.Helper()
	if _, err := w.hf.StartEvent(w.ns, name, required); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) editEvent(name string, change func(e *hfv1.ScheduledEvent)) {
	w.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		e, err := w.hf.Events.Get(w.ns, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(e)
		_, err = w.hf.Events.Update(e)
		return err
	})
	if err != nil {
		w.t.Fatal(err)
	}
}
