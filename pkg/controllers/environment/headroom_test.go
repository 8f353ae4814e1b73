package environment

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const headroomToken = "dop_v1_headroom"

// headroomHandler checks Environments against a fake DigitalOcean account
// with limit droplets allowed and held of them made.
func headroomHandler(t *testing.T, held, limit int, events ...*hfv1.ScheduledEvent) *handler {
	t.Helper()
	do := fakedo.New(fakedo.Options{BootDelay: fakedo.NoDelay, RateLimits: fakedo.RateLimits{Disabled: true}})
	if err := do.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(do.Close)
	do.AddAccount(headroomToken, fakedo.AccountOptions{DropletLimit: limit})
	for i := range held {
		do.CreateDropletOutOfBand(headroomToken, godo.DropletCreateRequest{Name: fmt.Sprintf("other-%d", i), Region: "nyc1",
			Size: "s-1vcpu-1gb", Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}})
	}
	h := preflightHandler(events, "ubuntu")
	h.ctx = context.Background()
	h.catalogs = digitalocean.NewCatalogs(digitalocean.NewClients(do.URL(), digitalocean.LimiterOptions{Disabled: true}))
	h.headroom = newHeadroom()
	h.vms = cached[*hfv1.VirtualMachine]{}
	h.pools = cached[*v1alpha1.WarmPool]{}
	return h
}

func headroomEnv(name string) *hfv1.Environment {
	env := preflightEnv(map[string]string{"region": "nyc1", "token": headroomToken},
		map[string]map[string]string{"ubuntu": {"size": "s-1vcpu-1gb"}})
	env.Name = name
	return env
}

// eventAt asks each of envs for seats VMs of template ubuntu, from start
// for four hours.
func eventAt(name string, start time.Time, seats int, envs ...string) *hfv1.ScheduledEvent {
	required := map[string]map[string]int{}
	for _, env := range envs {
		required[env] = map[string]int{"ubuntu": seats}
	}
	e := scheduledEvent(name, false, required)
	e.Spec.StartTime = start.UTC().Format(time.UnixDate)
	e.Spec.EndTime = start.Add(4 * time.Hour).UTC().Format(time.UnixDate)
	return e
}

// limitProblems validates env and returns its droplet limit warnings.
func limitProblems(t *testing.T, h *handler, env *hfv1.Environment) ([]Problem, *verdict) {
	t.Helper()
	v, err := h.validate(env)
	if err != nil {
		t.Fatal(err)
	}
	var out []Problem
	for _, p := range v.problems {
		if p.Reason == ReasonDropletLimitShort {
			out = append(out, p)
		} else if !p.Advisory {
			t.Fatalf("unexpected problem: %s", p.Message())
		}
	}
	return out, v
}

func TestDropletLimitShortfallIsWarnedBeforeTheEvent(t *testing.T) {
	h := headroomHandler(t, 20, 100, eventAt("workshop", time.Now().Add(2*time.Hour), 300, "env"))
	got, _ := limitProblems(t, h, headroomEnv("env"))
	if len(got) != 1 || !got[0].Advisory {
		t.Fatalf("problems %+v, want one advisory %s", got, ReasonDropletLimitShort)
	}
	for _, want := range []string{"the token from the plain-text token in environment_specifics.token",
		`: the scheduled events running or starting within 24 h still need 300 droplets ("workshop" of Environment "env" (300))`,
		"holds 20 droplets of its droplet limit 100: 220 short",
		"raise the account's droplet limit", "a token of another account"} {
		if !strings.Contains(got[0].Message(), want) {
			t.Errorf("%q lacks %q", got[0].Message(), want)
		}
	}
}

func TestDropletLimitWithRoomIsNotWarned(t *testing.T) {
	h := headroomHandler(t, 20, 100, eventAt("workshop", time.Now().Add(2*time.Hour), 70, "env"))
	if got, _ := limitProblems(t, h, headroomEnv("env")); len(got) != 0 {
		t.Fatalf("20 held and 70 seats on a limit of 100: %+v, want no warning", got)
	}
}

// Two Environments on one token share its account's limit: neither alone
// is short, both together are, and the first is told to look again.
func TestEnvironmentsOnOneTokenCountTogether(t *testing.T) {
	h := headroomHandler(t, 20, 100, eventAt("morning", time.Now().Add(time.Hour), 50, "env-a"),
		eventAt("afternoon", time.Now().Add(5*time.Hour), 50, "env-b"))
	if got, _ := limitProblems(t, h, headroomEnv("env-a")); len(got) != 0 {
		t.Fatalf("env-a alone (20 held, 50 seats, limit 100): %+v, want none", got)
	}
	got, v := limitProblems(t, h, headroomEnv("env-b"))
	if len(got) != 1 || !strings.Contains(got[0].Message(), `still need 100 droplets ("morning" of Environment "env-a" (50), "afternoon" of Environment "env-b" (50))`) ||
		!strings.Contains(got[0].Message(), "20 short") {
		t.Fatalf("env-b with env-a: %+v, want both events counted, 20 short", got)
	}
	if !slices.Equal(v.sharingToken, []string{"ns/env-a"}) {
		t.Errorf("Environments to check again: %v, want ns/env-a", v.sharingToken)
	}
	if got, _ := limitProblems(t, h, headroomEnv("env-a")); len(got) != 1 {
		t.Errorf("env-a checked again: %+v, want the shortfall too", got)
	}
}

// Only events running or starting within HeadroomWindow count; an ended
// event counts no more, and an event far ahead is checked once it comes
// within the window.
func TestOnlyEventsNowOrWithinADayCount(t *testing.T) {
	h := headroomHandler(t, 20, 100, eventAt("workshop", time.Now().Add(2*time.Hour), 300, "env"))
	if got, _ := limitProblems(t, h, headroomEnv("env")); len(got) != 1 {
		t.Fatalf("upcoming event: %+v, want the shortfall", got)
	}
	h.events = cached[*hfv1.ScheduledEvent]{objs: []*hfv1.ScheduledEvent{eventAt("workshop", time.Now().Add(-5*time.Hour), 300, "env")}}
	if got, _ := limitProblems(t, h, headroomEnv("env")); len(got) != 0 {
		t.Fatalf("the event ended: %+v, want no warning", got)
	}
	later := time.Now().Add(3 * 24 * time.Hour)
	h.events = cached[*hfv1.ScheduledEvent]{objs: []*hfv1.ScheduledEvent{eventAt("workshop", later, 300, "env")}}
	got, v := limitProblems(t, h, headroomEnv("env"))
	if len(got) != 0 {
		t.Fatalf("an event in three days: %+v, want no warning yet", got)
	}
	if until := time.Until(later.Add(-HeadroomWindow)); v.recheck > until+2*time.Second {
		t.Errorf("looks again in %v, want by the time the event is a day away (%v)", v.recheck, until)
	}
}

// VMs holding a droplet and warm pool members are seats no longer to come;
// as an event's VMs are made the shortfall stays the same, and so does the
// warning (one Event, not one per check).
func TestMadeVMsAndPoolMembersAreNotCountedTwice(t *testing.T) {
	h := headroomHandler(t, 20, 100, eventAt("workshop", time.Now().Add(-time.Hour), 300, "env"))
	first, _ := limitProblems(t, h, headroomEnv("env"))
	if len(first) != 1 {
		t.Fatalf("before any VM: %+v, want the shortfall", first)
	}

	h = headroomHandler(t, 20+60+40, 100, eventAt("workshop", time.Now().Add(-time.Hour), 300, "env"))
	var vms []*hfv1.VirtualMachine
	for i := range 60 {
		vms = append(vms, &hfv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("vm-%d", i), Namespace: "ns",
			Labels: map[string]string{v1alpha1.ScheduledEventLabel: "workshop"}},
			Spec:   hfv1.VirtualMachineSpec{VirtualMachineTemplateId: "ubuntu"},
			Status: hfv1.VirtualMachineStatus{Status: hfv1.VmStatusRunning, EnvironmentId: "env"}})
	}
	h.vms = cached[*hfv1.VirtualMachine]{objs: vms}
	h.pools = cached[*v1alpha1.WarmPool]{objs: []*v1alpha1.WarmPool{{ObjectMeta: metav1.ObjectMeta{Name: "pool", Namespace: "ns"},
		Spec:   v1alpha1.WarmPoolSpec{Environment: "env", Template: "ubuntu"},
		Status: v1alpha1.WarmPoolStatus{Ready: 30, Booting: 10}}}}
	got, _ := limitProblems(t, h, headroomEnv("env"))
	if len(got) != 1 || !strings.Contains(got[0].Message(), "still need 200 droplets") || !strings.Contains(got[0].Message(), "holds 120 droplets") {
		t.Fatalf("60 VMs running and 40 pool members: %+v, want 200 seats to come and 120 held", got)
	}
	if got[0].ID() != first[0].ID() {
		t.Errorf("the same shortfall has a new ID (%q, was %q): it would be warned again", got[0].ID(), first[0].ID())
	}
}
