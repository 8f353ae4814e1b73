package warmpool

import (
	"slices"
	"sync"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// ReasonEventTimesInvalid is the Warning on a pool serving an event whose
// times do not parse.
const ReasonEventTimesInvalid = "EventTimesInvalid"

// eventState is what the pool controller remembers of each pool's events.
type eventState struct {
	// opened holds, by pool UID, the windows open at the last pass
	// (map[string]bool by windowKey).
	opened sync.Map
	// warned holds the pool and event times already reported unparsable.
	warned sync.Map
}

func (s *eventState) forget(pool *v1alpha1.WarmPool) {
	s.opened.Delete(pool.UID)
}

// poolWindow is what the Environment's scheduled events ask of the pool
// now, with the seats they leave.
func (h *handler) poolWindow(pool *v1alpha1.WarmPool, env *hfv1.Environment, members []*v1alpha1.Droplet, now time.Time) (window, error) {
	events, err := h.events.List(env.Namespace, labels.Everything())
	if err != nil {
		return window{}, err
	}
	lead := startLead(h.refillTime(pool, members))
	wasOpen, _ := h.eventState.opened.Load(pool.UID)
	opened, _ := wasOpen.(map[string]bool)
	w := eventWindows(env.Name, pool.Spec.Template, events, now, lead, opened)
	h.eventState.opened.Store(pool.UID, w.Opened)
	h.warnUnparsed(pool, w.Unparsed)
	if len(w.Serving) == 0 {
		return w, nil
	}
	served, err := labels.NewRequirement(v1alpha1.ScheduledEventLabel, selection.In, eventNames(w.Serving))
	if err != nil {
		return w, err
	}
	vms, err := h.vms.Cache().List(pool.Namespace, labels.NewSelector().Add(*served))
	if err != nil {
		return w, err
	}
	w.Seats = seatsLeft(env.Name, pool.Spec.Template, w.Serving, h.served(vms, members))
	return w, nil
}

// served are the VMs that took their seat: those with a Droplet of their
// own or a claim on a member. A VM that has just arrived is about to take
// a member: counting its seat before that would drain the very member it
// is claiming, and the event's last VMs would find the pool empty.
func (h *handler) served(vms []*hfv1.VirtualMachine, members []*v1alpha1.Droplet) []*hfv1.VirtualMachine {
	claimed := map[string]bool{}
	for _, d := range members {
		if d.Status.Claim != nil {
			claimed[d.Status.Claim.UID] = true
		}
	}
	return slices.DeleteFunc(slices.Clone(vms), func(vm *hfv1.VirtualMachine) bool {
		if claimed[string(vm.UID)] {
			return false
		}
		_, err := h.droplets.Cache().Get(vm.Namespace, vm.Name)
		return err != nil
	})
}

// warnUnparsed reports, once per pool and event times, an event served
// though its times do not parse: as before its times counted, while it is
// active and not finished.
func (h *handler) warnUnparsed(pool *v1alpha1.WarmPool, events []*hfv1.ScheduledEvent) {
	for _, e := range events {
		key := string(pool.UID) + "/" + e.Name + "/" + e.Spec.StartTime + "/" + e.Spec.EndTime
		if _, seen := h.eventState.warned.LoadOrStore(key, true); seen {
			continue
		}
		logrus.WithField("pool", pool.Name).WithField("environment", pool.Spec.Environment).WithField("event", e.Name).
			Warnf("scheduled event times %q and %q do not parse: the pool serves the event while it is active and not finished", e.Spec.StartTime, e.Spec.EndTime)
		h.recorder.Eventf(pool, corev1.EventTypeWarning, ReasonEventTimesInvalid,
			"scheduled event %s: start_time %q or end_time %q is not in the layout %q: the pool serves it while it is active and not finished; correct the event's times",
			e.Name, e.Spec.StartTime, e.Spec.EndTime, time.UnixDate)
	}
}

// requeueAfter is when the pool is looked at again: at the next edge of
// an event's window, at the latest after the resync period.
func (h *handler) requeueAfter(w window, now time.Time) time.Duration {
	if w.Next.IsZero() {
		return h.opts.Resync
	}
	return max(0, min(h.opts.Resync, w.Next.Sub(now)))
}
