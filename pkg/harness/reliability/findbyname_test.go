package reliability

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
)

// A create sent alone gives the droplet no tag naming its VM: when its
// answer is lost, the droplet is found by its name and adopted, and no
// second one is made. Droplets of the same name that another installation,
// or this installation in another namespace, made are never adopted nor
// deleted, by the lookup, the VM's cleanup or the orphan sweep (run every
// second here, with no grace).
func TestALostCreateIsFoundByItsNameAndNoOtherInstallationsDroplet(t *testing.T) {
	const n = 3
	w := newWorld(t, worldOptions{sweepInterval: time.Second, orphanGrace: time.Nanosecond})
	names := make([]string, n)
	foreign := map[int]string{}
	for i := range names {
		names[i] = fmt.Sprintf("lost-%02d", i)
		name := digitalocean.DropletName(names[i])
		for _, tags := range [][]string{
			digitalocean.SharedTags(digitalocean.DropletTags("another-installation", w.ns, names[i], "uid", nil)),
			digitalocean.SharedTags(digitalocean.DropletTags(w.ns, "another-namespace", names[i], "uid", nil)),
		} {
			d := w.do.CreateDropletOutOfBand(w.token, godo.DropletCreateRequest{Name: name, Region: "nyc1",
				Size: "s-1vcpu-1gb", Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}, Tags: tags})
			foreign[d.ID] = name
		}
	}
	w.do.SetFaults(fakedo.Faults{Rules: map[string]fakedo.FaultRule{fakedo.RouteCreateDroplets: {DropResponseAfterApply: 1}}})
	env := w.standardEnv("env")
	for _, name := range names {
		if _, err := w.hf.CreateVM(w.ns, name, env, "ubuntu", "digitalocean"); err != nil {
			t.Fatal(err)
		}
	}
	// Every VM's first create is made and its answer lost; the ones after
	// it, if any were sent, would be answered.
	w.eventually(time.Minute, "a create of each VM applied", func() string {
		if created, _ := w.appliedCreates(); created < n {
			return fmt.Sprintf("%d of %d", created, n)
		}
		return ""
	})
	w.do.SetFaults(fakedo.Faults{})
	w.waitRunning(2*time.Minute, names...)

	ids := w.dropletIDs(names)
	for name, id := range ids {
		if _, isForeign := foreign[id]; isForeign {
			t.Errorf("%s adopted droplet %d, which another installation or namespace made", name, id)
		}
	}
	for _, d := range w.do.Droplets(w.token) {
		if _, isForeign := foreign[d.ID]; !isForeign && slices.ContainsFunc(d.Tags, digitalocean.IsVMTag) {
			t.Errorf("droplet %d (%s) carries a tag naming its VM: %v", d.ID, d.Name, d.Tags)
		}
	}
	if created, _ := w.appliedCreates(); created != n {
		t.Errorf("DigitalOcean applied %d droplet creates for %d VMs whose first answer was lost", created, n)
	}

	w.deleteVMs(names...)
	w.eventually(2*time.Minute, "the VMs' droplets deleted", func() string { return w.deletedVMsGone(ids) })
	live := w.liveIDs()
	for id, name := range foreign {
		if !slices.Contains(live, id) {
			t.Errorf("droplet %d (%s), made by another installation or in another namespace, was deleted", id, name)
		}
	}
	if len(live) != len(foreign) {
		t.Errorf("DigitalOcean holds droplets %v, want only the %d foreign ones", live, len(foreign))
	}
}
