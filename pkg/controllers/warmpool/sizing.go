package warmpool

import (
	"fmt"
	"slices"
	"strings"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
)

// startLead is how long before an event's start time its pool starts to
// fill: the pool's refill time and a margin (half of it, at least a
// minute), so the pool is ready at the start time.
func startLead(refill time.Duration) time.Duration {
	return refill + max(time.Minute, refill/2)
}

// EventTimes reads an event's start and end time as Gargantua writes them
// (time.UnixDate); ok is false when either does not parse.
func EventTimes(e *hfv1.ScheduledEvent) (start, end time.Time, ok bool) {
	start, errStart := time.Parse(time.UnixDate, e.Spec.StartTime)
	end, errEnd := time.Parse(time.UnixDate, e.Spec.EndTime)
	return start, end, errStart == nil && errEnd == nil
}

// window is what the scheduled events ask of one template's pool now.
type window struct {
	// Serving are the events the pool serves now: active, not finished,
	// asking for the template, from their start time minus the lead until
	// their end time.
	Serving []*hfv1.ScheduledEvent
	// Opened holds the windows open now, by windowKey.
	Opened map[string]bool
	// Unparsed are the events served because their times do not parse.
	Unparsed []*hfv1.ScheduledEvent
	// Next is the next time a window opens or closes (zero when none).
	Next time.Time
	// Upcoming is the event whose window opens first, at Opens.
	Upcoming *hfv1.ScheduledEvent
	Opens    time.Time
	// Seats are the VMs the serving events may still have (seatsLeft).
	Seats int
}

// windowKey names an event's window: a new start time is a new window.
func windowKey(e *hfv1.ScheduledEvent) string { return e.Name + "@" + e.Spec.StartTime }

// eventWindows finds the events env's pool of template serves at now.
// Gargantua sets active when it creates an event, days before its start,
// and unprovisions a running event on every edit, so the times decide,
// not provisioned. A window stays open once open (wasOpen): a learned
// refill time shorter than the one that opened it must not drain a pool
// that filled for the event.
func eventWindows(env, template string, events []*hfv1.ScheduledEvent, now time.Time, lead time.Duration, wasOpen map[string]bool) window {
	w := window{Opened: map[string]bool{}}
	edge := func(t time.Time) {
		if w.Next.IsZero() || t.Before(w.Next) {
			w.Next = t
		}
	}
	for _, e := range events {
		if _, asks := e.Spec.RequiredVirtualMachines[env][template]; !asks || e.DeletionTimestamp != nil || !e.Status.Active || e.Status.Finished {
			continue
		}
		start, end, ok := EventTimes(e)
		switch opens := start.Add(-lead); {
		case !ok:
			w.Serving = append(w.Serving, e)
			w.Unparsed = append(w.Unparsed, e)
		case !now.Before(end):
		case wasOpen[windowKey(e)] || !now.Before(opens):
			w.Serving = append(w.Serving, e)
			w.Opened[windowKey(e)] = true
			edge(end)
		default:
			edge(opens)
			if w.Upcoming == nil || opens.Before(w.Opens) {
				w.Upcoming, w.Opens = e, opens
			}
		}
	}
	slices.SortFunc(w.Serving, func(a, b *hfv1.ScheduledEvent) int { return strings.Compare(a.Name, b.Name) })
	return w
}

// seatsLeft is what the serving events leave of the VMs of env's template
// they asked for: each one's required count minus its VMs (labelled with
// it) that are not being deleted; an event over its count takes no seat
// of another.
func seatsLeft(env, template string, serving []*hfv1.ScheduledEvent, vms []*hfv1.VirtualMachine) int {
	used := map[string]int{}
	for _, vm := range vms {
		if vm.DeletionTimestamp == nil && vm.Spec.VirtualMachineTemplateId == template &&
			(vm.Status.EnvironmentId == env || vm.Labels[v1alpha1.EnvironmentLabel] == env) {
			used[vm.Labels[v1alpha1.ScheduledEventLabel]]++
		}
	}
	seats := 0
	for _, e := range serving {
		seats += max(0, e.Spec.RequiredVirtualMachines[env][template]-used[e.Name])
	}
	return seats
}

// wantedSize is the pool's current target and why: none outside its
// events' windows; within them its size (see handler.size), within the seats the
// events leave and what count_capacity leaves for the template once its
// VMs (vms) and the members VMs took but do not hold yet (claimedPending)
// are counted.
func wantedSize(pool *v1alpha1.WarmPool, env *hfv1.Environment, w window, vms, claimedPending, size int) (int, string) {
	if len(w.Serving) == 0 {
		if w.Upcoming != nil {
			start, _, _ := EventTimes(w.Upcoming)
			return 0, fmt.Sprintf("event %s starts at %s: the pool fills from %s", w.Upcoming.Name,
				start.UTC().Format(time.RFC3339), w.Opens.UTC().Format(time.RFC3339))
		}
		return 0, "no running event"
	}
	events := strings.Join(eventNames(w.Serving), ", ")
	if w.Seats <= 0 {
		return 0, fmt.Sprintf("the seats of event %s are taken by its VMs", events)
	}
	wanted := min(size, w.Seats)
	if capacity, ok := env.Spec.CountCapacity[pool.Spec.Template]; ok {
		if capacity-vms-claimedPending <= 0 {
			return 0, fmt.Sprintf("event %s is running but the template's count_capacity is taken by VMs", events)
		}
		wanted = min(wanted, capacity-vms-claimedPending)
	}
	return wanted, fmt.Sprintf("keeping %d ready for event %s", wanted, events)
}

// eventNames are the events' names; nil for none, as a status read back holds.
func eventNames(events []*hfv1.ScheduledEvent) []string {
	var names []string
	for _, e := range events {
		names = append(names, e.Name)
	}
	return names
}
