package warmpool

import (
	"slices"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
)

// activeEvents names the scheduled events that keep env's pools up: active,
// not finished, and asking for VMs of env.
func activeEvents(env string, events []*hfv1.ScheduledEvent) []string {
	var out []string
	for _, e := range events {
		if e.DeletionTimestamp != nil || !e.Status.Active || e.Status.Finished {
			continue
		}
		if _, ok := e.Spec.RequiredVirtualMachines[env]; ok {
			out = append(out, e.Name)
		}
	}
	slices.Sort(out)
	return out
}

// wantedSize is the pool's current target: none without an active event,
// else its size (see handler.size) within what count_capacity leaves for
// the template once its VMs (vms) and the members VMs took but do not hold
// yet (claimedPending) are counted.
func wantedSize(pool *v1alpha1.WarmPool, env *hfv1.Environment, active []string, vms, claimedPending, size int) int {
	if len(active) == 0 {
		return 0
	}
	wanted := size
	if capacity, ok := env.Spec.CountCapacity[pool.Spec.Template]; ok {
		wanted = min(wanted, capacity-vms-claimedPending)
	}
	return max(wanted, 0)
}
