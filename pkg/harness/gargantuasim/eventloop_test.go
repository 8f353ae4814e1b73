package gargantuasim

import (
	"fmt"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An event is active from its creation, provisioned and ready only once its
// start time has passed, finished (still active) once its end time has; an
// admin's edit of its times unprovisions it, and it is provisioned again at
// once when its start time is past. Every version alike.
func TestScheduledEventFollowsItsTimes(t *testing.T) {
	for _, v := range []Version{V1_0, V3_0, V3_3} {
		t.Run(v.String(), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, v)
			w.run()
			c, ns := w.g.Clients, w.g.Namespace
			required := map[string]map[string]int{w.env.Name: {templateName: 3}}
			now := time.Now()
			if _, err := c.CreateEvent(ns, "later", now.Add(24*time.Hour), now.Add(25*time.Hour), false, required); err != nil {
				t.Fatal(err)
			}
			// Second resolution: the start is at least 2 s ahead.
			start := now.Add(3 * time.Second).Truncate(time.Second)
			if _, err := c.CreateEvent(ns, "soon", start, start.Add(3*time.Second), true, required); err != nil {
				t.Fatal(err)
			}
			if s := w.event("soon").Status; !s.Active || s.Provisioned || s.Ready || s.Finished {
				t.Fatalf("a new event's status %+v, want active only", s)
			}
			var provisionedAt time.Time
			testutil.Eventually(t, 30*time.Second, "soon provisioned and ready", func() string {
				s := w.event("soon").Status
				if s.Provisioned && provisionedAt.IsZero() {
					provisionedAt = time.Now()
				}
				return wantStatus(s, true, true, false)
			})
			if provisionedAt.Before(start) {
				t.Errorf("provisioned at %s, before its start time %s", provisionedAt, start)
			}
			testutil.Eventually(t, 30*time.Second, "soon finished", func() string {
				return wantStatus(w.event("soon").Status, true, false, true)
			})
			if time.Now().Before(start.Add(3 * time.Second)) {
				t.Errorf("finished before its end time")
			}

			// An admin moves the event's start time into the past.
			if err := c.EditEventTimes(ns, "later", time.Now().Add(-time.Minute), time.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			testutil.Eventually(t, 30*time.Second, "later provisioned after the edit", func() string {
				return wantStatus(w.event("later").Status, true, true, false)
			})
			// And the end time of the running event: provisioned again.
			end := time.Now().Add(2 * time.Hour)
			if err := c.EditEventTimes(ns, "later", time.Now().Add(-time.Minute), end); err != nil {
				t.Fatal(err)
			}
			if e := w.event("later"); e.Spec.EndTime != EventTime(end) {
				t.Errorf("end time %q after the edit, want %q", e.Spec.EndTime, EventTime(end))
			}
			testutil.Eventually(t, 30*time.Second, "later provisioned after the second edit", func() string {
				return wantStatus(w.event("later").Status, true, true, false)
			})
		})
	}
}

// An event a day ahead stays unprovisioned.
func TestScheduledEventWaitsForItsStartTime(t *testing.T) {
	w := newWorld(t, V3_0)
	w.run()
	now := time.Now()
	if _, err := w.g.Clients.CreateEvent(w.g.Namespace, "tomorrow", now.Add(24*time.Hour), now.Add(25*time.Hour), false, nil); err != nil {
		t.Fatal(err)
	}
	stays(t, 3*time.Second, "an event a day ahead", func() string {
		if s := w.event("tomorrow").Status; !s.Active || s.Provisioned || s.Ready || s.Finished {
			return fmt.Sprintf("status %+v", s)
		}
		return ""
	})
}

func (w *world) event(name string) *hfv1.ScheduledEvent {
	w.t.Helper()
	e, err := w.g.Clients.Events.Get(w.g.Namespace, name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return e
}

// wantStatus is "" when an active event's status is as given.
func wantStatus(s hfv1.ScheduledEventStatus, provisioned, ready, finished bool) string {
	if !s.Active || s.Provisioned != provisioned || s.Ready != ready || s.Finished != finished {
		return fmt.Sprintf("status %+v", s)
	}
	return ""
}
