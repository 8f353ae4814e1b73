package warmpool

import (
	"slices"
	"strings"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var noon = time.Date(2030, 5, 10, 12, 0, 0, 0, time.UTC)

// event is an active event from start to end (times relative to noon)
// asking for seats VMs of template t of each of envs.
func event(name string, start, end time.Duration, seats int, envs ...string) *hfv1.ScheduledEvent {
	e := &hfv1.ScheduledEvent{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: hfv1.ScheduledEventSpec{RequiredVirtualMachines: map[string]map[string]int{},
			StartTime: noon.Add(start).Format(time.UnixDate), EndTime: noon.Add(end).Format(time.UnixDate)},
		Status: hfv1.ScheduledEventStatus{Active: true}}
	for _, env := range envs {
		e.Spec.RequiredVirtualMachines[env] = map[string]int{"t": seats}
	}
	return e
}

func with(e *hfv1.ScheduledEvent, change func(*hfv1.ScheduledEvent)) *hfv1.ScheduledEvent {
	change(e)
	return e
}

func TestStartLeadIsTheRefillTimeAndAMargin(t *testing.T) {
	for refill, want := range map[time.Duration]time.Duration{
		30 * time.Second: 90 * time.Second, // at least a minute of margin
		2 * time.Minute:  3 * time.Minute,
		10 * time.Minute: 15 * time.Minute, // half of a long refill
	} {
		if got := startLead(refill); got != want {
			t.Errorf("lead for a refill of %s: %s, want %s", refill, got, want)
		}
	}
}

// The times decide, not provisioned (Gargantua's active is set days
// ahead, and provisioned flickers on an edit): a pool serves an active,
// unfinished event asking for its template from start minus lead to end.
func TestEventWindows(t *testing.T) {
	const lead = 3 * time.Minute
	h := time.Hour
	for name, c := range map[string]struct {
		event   *hfv1.ScheduledEvent
		wasOpen bool
		serving bool
		next    time.Duration // from noon; 0: none
	}{
		"a day ahead":                  {event("e", 24*h, 25*h, 3, "env"), false, false, 24*h - lead},
		"within the lead":              {event("e", 2*time.Minute, h, 3, "env"), false, true, h},
		"running":                      {event("e", -h, h, 3, "env"), false, true, h},
		"running, unprovisioned":       {with(event("e", -h, h, 3, "env"), func(e *hfv1.ScheduledEvent) { e.Status.Provisioned = false }), false, true, h},
		"past its end time":            {event("e", -2*h, -h, 3, "env"), false, false, 0},
		"deactivated":                  {with(event("e", -h, h, 3, "env"), func(e *hfv1.ScheduledEvent) { e.Status.Active = false }), false, false, 0},
		"finished":                     {with(event("e", -h, h, 3, "env"), func(e *hfv1.ScheduledEvent) { e.Status.Finished = true }), false, false, 0},
		"another environment":          {event("e", -h, h, 3, "other"), false, false, 0},
		"another template":             {with(event("e", -h, h, 3, "env"), func(e *hfv1.ScheduledEvent) { e.Spec.RequiredVirtualMachines["env"] = map[string]int{"u": 3} }), false, false, 0},
		"opened before stays open":     {event("e", 10*time.Minute, h, 3, "env"), true, true, h},
		"opened before, still ends":    {event("e", -2*h, -h, 3, "env"), true, false, 0},
		"times unparsable: as active":  {with(event("e", 0, 0, 3, "env"), func(e *hfv1.ScheduledEvent) { e.Spec.StartTime = "next friday" }), false, true, 0},
		"unparsable and finished: off": {with(event("e", 0, 0, 3, "env"), func(e *hfv1.ScheduledEvent) { e.Spec.EndTime, e.Status.Finished = "", true }), false, false, 0},
	} {
		w := eventWindows("env", "t", []*hfv1.ScheduledEvent{c.event}, noon, lead, map[string]bool{windowKey(c.event): c.wasOpen})
		if got := len(w.Serving) == 1; got != c.serving {
			t.Errorf("%s: serving %v, want %v", name, got, c.serving)
		}
		if got := w.Opened[windowKey(c.event)]; got != (c.serving && len(w.Unparsed) == 0) {
			t.Errorf("%s: window open %v", name, got)
		}
		if want := noon.Add(c.next); (c.next == 0) != w.Next.IsZero() || (c.next != 0 && !w.Next.Equal(want)) {
			t.Errorf("%s: next edge %s, want %s", name, w.Next, want)
		}
	}
}

func TestEventWindowsReportUpcomingAndUnparsed(t *testing.T) {
	bad := with(event("bad", 0, 0, 1, "env"), func(e *hfv1.ScheduledEvent) { e.Spec.EndTime = "soon" })
	// A window opened for the old start time does not hold the new one open.
	moved := event("moved", 24*time.Hour, 25*time.Hour, 1, "env")
	w := eventWindows("env", "t", []*hfv1.ScheduledEvent{
		event("later", 48*time.Hour, 49*time.Hour, 1, "env"), moved, bad, event("a-now", -time.Hour, time.Hour, 1, "env"),
	}, noon, time.Minute, map[string]bool{"moved@" + noon.Format(time.UnixDate): true})
	if got := eventNames(w.Serving); !slices.Equal(got, []string{"a-now", "bad"}) {
		t.Errorf("serving %v, want [a-now bad]", got)
	}
	if len(w.Unparsed) != 1 || w.Unparsed[0] != bad {
		t.Errorf("unparsed %v, want [bad]", eventNames(w.Unparsed))
	}
	if w.Upcoming != moved || !w.Opens.Equal(noon.Add(24*time.Hour-time.Minute)) {
		t.Errorf("upcoming %v at %s, want moved at a day minus the lead", w.Upcoming, w.Opens)
	}
	if !w.Next.Equal(noon.Add(time.Hour)) {
		t.Errorf("next edge %s, want a-now's end", w.Next)
	}
}

func TestSeatsLeftAreTheEventsVMsNotYetMade(t *testing.T) {
	vm := func(event, env, template string, deleting bool) *hfv1.VirtualMachine {
		v := &hfv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1alpha1.ScheduledEventLabel: event}},
			Spec: hfv1.VirtualMachineSpec{VirtualMachineTemplateId: template}, Status: hfv1.VirtualMachineStatus{EnvironmentId: env}}
		if deleting {
			v.DeletionTimestamp = &metav1.Time{Time: noon}
		}
		return v
	}
	labelledOnly := vm("a", "", "t", false)
	labelledOnly.Labels[v1alpha1.EnvironmentLabel] = "env" // a VM set's VM before Gargantua's status write
	vms := []*hfv1.VirtualMachine{
		vm("a", "env", "t", false), labelledOnly, vm("a", "env", "t", true), vm("a", "env", "u", false), vm("a", "other", "t", false),
		vm("b", "env", "t", false), vm("b", "env", "t", false), vm("b", "env", "t", false), // b is over its count
		vm("c", "env", "t", false),
	}
	a, b := event("a", 0, time.Hour, 5, "env"), event("b", 0, time.Hour, 2, "env")
	if got := seatsLeft("env", "t", []*hfv1.ScheduledEvent{a, b}, vms); got != 3 {
		t.Errorf("seats left %d, want 3 (a: 5 minus 2; b over its 2 takes none of a's)", got)
	}
}

func TestWantedSize(t *testing.T) {
	pool := &v1alpha1.WarmPool{Spec: v1alpha1.WarmPoolSpec{Environment: "env", Template: "t", WarmPool: 5}}
	env := func(capacity map[string]int) *hfv1.Environment {
		return &hfv1.Environment{Spec: hfv1.EnvironmentSpec{CountCapacity: capacity}}
	}
	running := []*hfv1.ScheduledEvent{event("e", -time.Hour, time.Hour, 10, "env")}
	open := func(seats int) window { return window{Serving: running, Seats: seats} }
	upcoming := window{Upcoming: event("fri", 96*time.Hour, 100*time.Hour, 3, "env"), Opens: noon.Add(96*time.Hour - 3*time.Minute)}
	for name, c := range map[string]struct {
		env          *hfv1.Environment
		w            window
		vms, claimed int
		want         int
		why          string
	}{
		"no running event drains":           {env(nil), window{}, 0, 0, 0, "no running event"},
		"an event ahead: not yet":           {env(nil), upcoming, 0, 0, 0, "event fri starts at 2030-05-14T12:00:00Z: the pool fills from 2030-05-14T11:57:00Z"},
		"running, no capacity entry":        {env(nil), open(10), 40, 3, 5, "keeping 5 ready for event e"},
		"fewer seats than warm_pool":        {env(nil), open(3), 0, 0, 3, "keeping 3 ready for event e"},
		"seats taken":                       {env(nil), open(0), 0, 0, 0, "the seats of event e are taken by its VMs"},
		"capacity of another template only": {env(map[string]int{"u": 1}), open(10), 0, 0, 5, "keeping 5"},
		"capacity leaves room for all":      {env(map[string]int{"t": 20}), open(10), 10, 0, 5, "keeping 5"},
		"capacity leaves room for some":     {env(map[string]int{"t": 10}), open(10), 6, 1, 3, "keeping 3"},
		"seats below capacity's room":       {env(map[string]int{"t": 10}), open(2), 6, 1, 2, "keeping 2"},
		"capacity taken":                    {env(map[string]int{"t": 10}), open(10), 10, 0, 0, "count_capacity is taken"},
		"capacity overrun floors at 0":      {env(map[string]int{"t": 2}), open(10), 5, 2, 0, "count_capacity is taken"},
	} {
		got, why := wantedSize(pool, c.env, c.w, c.vms, c.claimed, pool.Spec.WarmPool)
		if got != c.want || !strings.Contains(why, c.why) {
			t.Errorf("%s: wanted %d (%q), want %d (%q)", name, got, why, c.want, c.why)
		}
	}
}
