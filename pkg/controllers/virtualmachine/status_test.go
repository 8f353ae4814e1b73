package virtualmachine

import (
	"testing"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
)

func TestDesiredStatus(t *testing.T) {
	created := func() *v1alpha1.Droplet {
		d := &v1alpha1.Droplet{Status: v1alpha1.DropletStatus{DropletID: 7, PublicIPv4: "127.100.0.7"}}
		d.Spec.Name = "hf-vm"
		return d
	}
	active := func() *v1alpha1.Droplet {
		d := created()
		events.SetCondition(d, v1alpha1.Ready, true, "Active", "")
		return d
	}
	reachable := func() *v1alpha1.Droplet {
		d := active()
		events.SetCondition(d, v1alpha1.Reachable, true, "LoggedIn", "")
		return d
	}
	for _, c := range []struct {
		name    string
		status  hfv1.VmStatus
		droplet *v1alpha1.Droplet
		failure string
		want    hfv1.VmStatus // "" for no change
	}{
		{"no droplet yet", hfv1.VmStatusRFP, nil, "", ""},
		{"created", hfv1.VmStatusRFP, created(), "", hfv1.VmStatusProvisioned},
		{"active but not reachable stays provisioned", hfv1.VmStatusProvisioned, active(), "", ""},
		{"active and reachable", hfv1.VmStatusProvisioned, reachable(), "", hfv1.VmStatusRunning},
		{"running stays running", hfv1.VmStatusRunning, active(), "", ""},
		{"running whose Droplet is gone stays running", hfv1.VmStatusRunning, nil, "", ""},
		{"failed before a droplet", hfv1.VmStatusRFP, nil, "bad region", VMStatusErrorDuringProvisioning},
		{"failed after the create", hfv1.VmStatusProvisioned, active(), "timed out", VMStatusErrorDuringProvisioning},
		{"fixed before a droplet resumes", VMStatusErrorDuringProvisioning, nil, "", hfv1.VmStatusRFP},
		{"fixed after the create", VMStatusErrorDuringProvisioning, created(), "", hfv1.VmStatusProvisioned},
		{"fixed and reachable", VMStatusErrorDuringProvisioning, reachable(), "", hfv1.VmStatusRunning},
	} {
		t.Run(c.name, func(t *testing.T) {
			vm := &hfv1.VirtualMachine{Status: hfv1.VirtualMachineStatus{Status: c.status}}
			status, _ := desiredStatus(vm, c.droplet, c.failure)
			got, _ := status["status"].(hfv1.VmStatus)
			if got != c.want {
				t.Errorf("status patch %q, want %q", got, c.want)
			}
		})
	}
}
