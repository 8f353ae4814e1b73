package droplet

import (
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/sirupsen/logrus"
)

// Reasons of a VM's Droplet that took a warm pool's member.
const (
	// ReasonClaimedFromPool: the droplet was taken from a warm pool, not created.
	ReasonClaimedFromPool = "ClaimedFromPool"
	// ReasonClaimedDropletGone: the taken droplet no longer exists; none is
	// created in its place.
	ReasonClaimedDropletGone = "ClaimedDropletGone"
)

// IsPoolMember: d is a droplet a WarmPool keeps for VMs to take, with no
// VM of its own (a VM's Droplet taken from a pool records the pool too).
func IsPoolMember(d *v1alpha1.Droplet) bool {
	return d.Spec.Pool != nil && d.Spec.VirtualMachine == ""
}

// logFor names what d serves in every line: its VM, or its warm pool.
func logFor(d *v1alpha1.Droplet) *logrus.Entry {
	if IsPoolMember(d) {
		return logrus.WithField("pool", d.Spec.Pool.Name).WithField("member", d.Name)
	}
	return logrus.WithField("vm", d.Spec.VirtualMachine)
}

// poolName is the WarmPool d belongs to or was taken from.
func poolName(d *v1alpha1.Droplet) string {
	if d.Spec.Pool == nil {
		return ""
	}
	return d.Spec.Pool.Name
}
