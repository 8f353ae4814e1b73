package reliability

import (
	"fmt"
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestVMDeletedWhileCreateInFlight deletes VMs while DigitalOcean takes 2 s
// to answer their droplet's create, at three moments: as soon as the
// Droplet object appears, once the controller has recorded that it is
// creating, and one second into the create. In the "lost" variant the create
// is applied but its answer never arrives, so the controller never learns
// the droplet's ID. Every way, no droplet and no key may survive the VM.
func TestVMDeletedWhileCreateInFlight(t *testing.T) {
	for _, variant := range []struct {
		name string
		rule fakedo.FaultRule
	}{
		{"slow", fakedo.FaultRule{Latency: 2 * time.Second}},
		{"slow-and-lost", fakedo.FaultRule{Latency: 2 * time.Second, DropResponseAfterApply: 1}},
	} {
		t.Run(variant.name, func(t *testing.T) {
			w := newWorld(t, worldOptions{})
			w.do.SetFaults(fakedo.Faults{Rules: map[string]fakedo.FaultRule{
				fakedo.RouteCreateDroplets: variant.rule,
				// The VM's Key goes at the same time as its Droplet; were its
				// delete faster than the create, DigitalOcean would refuse the
				// create for its unknown key and nothing would be in flight.
				fakedo.RouteDeleteKey: {Latency: 4 * time.Second},
			}})
			env := w.standardEnv("slow")
			dups := w.watchDuplicates(50 * time.Millisecond)

			moments := []struct {
				vm   string
				when func(*v1alpha1.Droplet) bool
			}{
				{"on-sight", func(*v1alpha1.Droplet) bool { return true }},
				{"on-creating", creating},
				{"mid-create", creating},
			}
			for _, m := range moments {
				w.createVMs(env, m.vm, 1)
			}
			for _, m := range moments {
				name := m.vm + "-00"
				w.eventually(20*time.Second, name+" reaches its moment", func() string {
					d, err := w.drops.Get(w.ns, name, metav1.GetOptions{})
					if err != nil {
						return err.Error()
					}
					if !m.when(d) {
						return fmt.Sprintf("Created=%s/%s", v1alpha1.Created.GetStatus(d), v1alpha1.Created.GetReason(d))
					}
					return ""
				})
				if m.vm == "mid-create" {
					time.Sleep(time.Second)
				}
				w.deleteVMs(name)
			}

			w.waitAllGone(45 * time.Second)
			// A late answer or a retry must not bring a droplet back.
			time.Sleep(3 * time.Second)
			if n := len(w.do.Droplets(w.token)); n != 0 {
				t.Errorf("%d droplets appeared after the VMs were gone", n)
			}
			dups.halt()
			dups.check(t)
			created, _ := w.appliedCreates()
			t.Logf("%d droplet creates applied by DigitalOcean; request counts:%s", created, counts(w.do.RequestCounts()))
			if created == 0 {
				t.Error("no create reached DigitalOcean: the test never had a create in flight")
			}
		})
	}
}

// creating: the controller has decided to create the droplet (it records
// that just before it sends the create; see recordIntent).
func creating(d *v1alpha1.Droplet) bool {
	return v1alpha1.Created.GetReason(d) == "Creating" || d.Status.DropletID != 0
}
