package warmpool

import (
	"slices"
	"testing"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func event(name string, active, finished bool, envs ...string) *hfv1.ScheduledEvent {
	e := &hfv1.ScheduledEvent{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:   hfv1.ScheduledEventSpec{RequiredVirtualMachines: map[string]map[string]int{}},
		Status: hfv1.ScheduledEventStatus{Active: active, Finished: finished}}
	for _, env := range envs {
		e.Spec.RequiredVirtualMachines[env] = map[string]int{"t": 1}
	}
	return e
}

func TestActiveEventsAreThoseRunningForTheEnvironment(t *testing.T) {
	got := activeEvents("env", []*hfv1.ScheduledEvent{
		event("b", true, false, "env"),
		event("a", true, false, "other", "env"),
		event("not-started", false, false, "env"),
		event("ended", true, true, "env"),
		event("finished", false, true, "env"),
		event("elsewhere", true, false, "other"),
	})
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("active events %v, want [a b]", got)
	}
}

func TestWantedSize(t *testing.T) {
	pool := &v1alpha1.WarmPool{Spec: v1alpha1.WarmPoolSpec{Environment: "env", Template: "t", WarmPool: 5}}
	env := func(capacity map[string]int) *hfv1.Environment {
		return &hfv1.Environment{Spec: hfv1.EnvironmentSpec{CountCapacity: capacity}}
	}
	for name, c := range map[string]struct {
		env          *hfv1.Environment
		active       []string
		vms, claimed int
		want         int
	}{
		"no active event drains":            {env(nil), nil, 0, 0, 0},
		"active, no capacity entry":         {env(nil), []string{"e"}, 40, 3, 5},
		"capacity of another template only": {env(map[string]int{"u": 1}), []string{"e"}, 0, 0, 5},
		"capacity leaves room for all":      {env(map[string]int{"t": 20}), []string{"e"}, 10, 0, 5},
		"capacity leaves room for some":     {env(map[string]int{"t": 10}), []string{"e"}, 6, 1, 3},
		"capacity taken":                    {env(map[string]int{"t": 10}), []string{"e"}, 10, 0, 0},
		"capacity overrun floors at 0":      {env(map[string]int{"t": 2}), []string{"e"}, 5, 2, 0},
	} {
		if got := wantedSize(pool, c.env, c.active, c.vms, c.claimed, pool.Spec.WarmPool); got != c.want {
			t.Errorf("%s: wanted %d, want %d", name, got, c.want)
		}
	}
}
