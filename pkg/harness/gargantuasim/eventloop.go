package gargantuasim

import (
	"context"
	"fmt"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
)

// eventRetry is how soon a failed event write is tried again.
const eventRetry = 200 * time.Millisecond

// RunEvents runs Gargantua's scheduled-event controller for g.Namespace
// until ctx ends (the same in every Version): once an active event's start
// time has passed it is provisioned (provisioned, then ready in a later
// pass), on-demand or not; once its end time has passed it is completed
// (finished; active stays true). It acts on every change of an event, as
// Gargantua does within moments of an admin's edit, and at each start and
// end time (where Gargantua may lag up to its 30 min resync). It makes no
// VM sets: tests call CreateVMSet for those.
func (g *Gargantua) RunEvents(ctx context.Context) error {
	changed := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	informer := cache.NewSharedIndexInformer(listWatch(g.Clients.Events, g.Namespace), &hfv1.ScheduledEvent{}, 0, cache.Indexers{})
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: poke, UpdateFunc: func(_, obj any) { poke(obj) }, DeleteFunc: poke,
	}); err != nil {
		return err
	}
	done := make(chan struct{})
	defer func() { <-done }()
	go func() { defer close(done); informer.RunWithContext(ctx) }()
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return nil
	}
	for {
		wait := time.Hour
		for _, obj := range informer.GetStore().List() {
			next, err := g.advanceEvent(obj.(*hfv1.ScheduledEvent), time.Now())
			if err != nil {
				if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
					utilruntime.HandleError(fmt.Errorf("gargantuasim %s: scheduled event: %w", g.Version, err))
				}
				next = eventRetry
			}
			if next > 0 {
				wait = min(wait, next)
			}
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-changed:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// advanceEvent makes the one status write Gargantua's controller makes for
// e now, if any, and returns how long until e's next start or end time
// (0 when none is ahead).
func (g *Gargantua) advanceEvent(e *hfv1.ScheduledEvent, now time.Time) (time.Duration, error) {
	start, errStart := time.Parse(time.UnixDate, e.Spec.StartTime)
	end, errEnd := time.Parse(time.UnixDate, e.Spec.EndTime)
	if errStart != nil || errEnd != nil || !e.Status.Active || e.DeletionTimestamp != nil {
		return 0, nil
	}
	s := e.Status
	var change func(*hfv1.ScheduledEvent)
	switch {
	case end.Before(now) && !s.Finished:
		change = completeEvent
	case s.Finished:
	case start.Before(now) && !s.Provisioned:
		change = func(e *hfv1.ScheduledEvent) { e.Status.Provisioned = true }
	case start.Before(now) && !s.Ready:
		change = func(e *hfv1.ScheduledEvent) { e.Status.Ready = true }
	}
	if change != nil {
		updated := e.DeepCopy()
		change(updated)
		_, err := g.Clients.Events.UpdateStatus(updated)
		return 0, err
	}
	for _, edge := range []time.Time{start, end} {
		if edge.After(now) {
			// Just past the edge: Before(now) holds only once now is later.
			return edge.Sub(now) + 10*time.Millisecond, nil
		}
	}
	return 0, nil
}
