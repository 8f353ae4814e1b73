package droplet

import (
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/sirupsen/logrus"
)

// logFor names what d serves in every line: its VM, or its warm pool.
func logFor(d *v1alpha1.Droplet) *logrus.Entry {
	if d.IsPoolMember() {
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
