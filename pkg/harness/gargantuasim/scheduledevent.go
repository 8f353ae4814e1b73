package gargantuasim

import (
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EventTime is how Gargantua writes spec.start_time and spec.end_time.
func EventTime(t time.Time) string { return t.UTC().Format(time.UnixDate) }

// CreateEvent creates a ScheduledEvent as Gargantua's admin API does: the
// times in time.UnixDate (UTC), then status active (whatever the start
// time), not provisioned, ready or finished. requiredVMs is Environment →
// template → count. RunEvents provisions it at its start time.
func (c *Clients) CreateEvent(namespace, name string, start, end time.Time, onDemand bool, requiredVMs map[string]map[string]int) (*hfv1.ScheduledEvent, error) {
	e, err := c.Events.Create(&hfv1.ScheduledEvent{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: hfv1.ScheduledEventSpec{Name: name, AccessCode: name, OnDemand: onDemand,
			StartTime: EventTime(start), EndTime: EventTime(end), RequiredVirtualMachines: requiredVMs},
	})
	if err != nil {
		return nil, err
	}
	e.Status = hfv1.ScheduledEventStatus{Active: true}
	return c.Events.UpdateStatus(e)
}

// EditEventTimes edits an event's times as Gargantua's admin API does: the
// new times, then provisioned, ready and finished false, whatever the event
// was; RunEvents provisions it again once its start time has passed.
func (c *Clients) EditEventTimes(namespace, name string, start, end time.Time) error {
	if _, err := retryWrite(c.Events, namespace, name, false, func(e *hfv1.ScheduledEvent) {
		e.Spec.StartTime, e.Spec.EndTime = EventTime(start), EventTime(end)
	}); err != nil {
		return err
	}
	_, err := retryWrite(c.Events, namespace, name, true, func(e *hfv1.ScheduledEvent) {
		e.Status.Provisioned, e.Status.Ready, e.Status.Finished = false, false, false
	})
	return err
}

// StartEvent creates an on-demand ScheduledEvent that started a minute ago
// and ends in a day, already provisioned and ready, as Gargantua leaves one
// after its start time.
func (c *Clients) StartEvent(namespace, name string, requiredVMs map[string]map[string]int) (*hfv1.ScheduledEvent, error) {
	now := time.Now()
	e, err := c.CreateEvent(namespace, name, now.Add(-time.Minute), now.Add(24*time.Hour), true, requiredVMs)
	if err != nil {
		return nil, err
	}
	e.Status.Provisioned, e.Status.Ready = true, true
	return c.Events.UpdateStatus(e)
}

// EndEvent completes the ScheduledEvent as Gargantua does at its end time:
// finished, provisioned, not ready; active stays true.
func (c *Clients) EndEvent(namespace, name string) (*hfv1.ScheduledEvent, error) {
	return retryWrite(c.Events, namespace, name, true, completeEvent)
}

func completeEvent(e *hfv1.ScheduledEvent) {
	e.Status.Provisioned, e.Status.Ready, e.Status.Finished = true, false, true
}
