package gargantuasim

import (
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StartEvent creates an on-demand ScheduledEvent that asks for VMs of the
// Environments in requiredVMs (Environment → template → count) and marks it
// active, as Gargantua's scheduled-event controller does at its start time.
func (c *Clients) StartEvent(namespace, name string, requiredVMs map[string]map[string]int) (*hfv1.ScheduledEvent, error) {
	e, err := c.Events.Create(&hfv1.ScheduledEvent{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: hfv1.ScheduledEventSpec{Name: name, AccessCode: name, OnDemand: true,
			RequiredVirtualMachines: requiredVMs},
	})
	if err != nil {
		return nil, err
	}
	e.Status = hfv1.ScheduledEventStatus{Active: true, Provisioned: true, Ready: true}
	return c.Events.UpdateStatus(e)
}

// EndEvent marks the ScheduledEvent finished and no longer active, as
// Gargantua does at its end time.
func (c *Clients) EndEvent(namespace, name string) (*hfv1.ScheduledEvent, error) {
	e, err := c.Events.Get(namespace, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	e.Status.Active, e.Status.Finished = false, true
	return c.Events.UpdateStatus(e)
}
