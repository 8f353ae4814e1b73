package bench

// Stand-ins for gargantuasim's scheduled-event calls that another branch
// adds (see the warm pool work's shared interfaces). Delete this file at the
// merge and call the real ones: createEvent(c, ...) → c.CreateEvent(...),
// runEvents(ctx, g) → g.RunEvents(ctx) (or g.Run, should that run it).

import (
	"context"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/gargantuasim"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// createEvent is Gargantua's admin API creating a ScheduledEvent: its times
// in time.UnixDate (UTC), active and nothing else yet.
// stand-in until merged
func createEvent(c *gargantuasim.Clients, namespace, name string, start, end time.Time, onDemand bool,
	requiredVMs map[string]map[string]int) (*hfv1.ScheduledEvent, error) {
	e, err := c.Events.Create(&hfv1.ScheduledEvent{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: hfv1.ScheduledEventSpec{Name: name, AccessCode: name, OnDemand: onDemand, RequiredVirtualMachines: requiredVMs,
			StartTime: start.UTC().Format(time.UnixDate), EndTime: end.UTC().Format(time.UnixDate)},
	})
	if err != nil {
		return nil, err
	}
	e.Status = hfv1.ScheduledEventStatus{Active: true}
	return c.Events.UpdateStatus(e)
}

// runEvents is Gargantua's scheduled-event controller for g.Namespace: at
// start_time provisioned and ready, at end_time finished; polled each second.
// stand-in until merged
func runEvents(ctx context.Context, g *gargantuasim.Gargantua) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if list, err := g.Clients.Events.List(g.Namespace, metav1.ListOptions{}); err == nil {
			for i := range list.Items {
				e := &list.Items[i]
				start, err1 := time.Parse(time.UnixDate, e.Spec.StartTime)
				end, err2 := time.Parse(time.UnixDate, e.Spec.EndTime)
				if err1 != nil || err2 != nil {
					continue
				}
				now := time.Now()
				provision := !now.Before(start) && !e.Status.Provisioned
				finish := !now.Before(end) && !e.Status.Finished
				if provision || finish {
					e.Status.Provisioned, e.Status.Ready = e.Status.Provisioned || provision, e.Status.Ready || provision
					e.Status.Finished = e.Status.Finished || finish
					_, _ = g.Clients.Events.UpdateStatus(e)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
