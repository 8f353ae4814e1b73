package virtualmachine

import (
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshprobe"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Each step of a droplet's way must re-run the VM exactly when the VM acts
// on it: a missed one leaves a VM stuck short of running or of failed.
func TestDropletWritesThatReRunTheVM(t *testing.T) {
	base := func() *v1alpha1.Droplet {
		d := &v1alpha1.Droplet{ObjectMeta: metav1.ObjectMeta{Name: "vm-1", Namespace: "ns", ResourceVersion: "1"}}
		d.Spec.Name = "hf-vm-1"
		events.SetCondition(d, v1alpha1.Configured, true, v1alpha1.ReasonConfigValid, v1alpha1.MessageConfigValid)
		return d
	}
	created := func() *v1alpha1.Droplet {
		d := base()
		d.Status.DropletID, d.Status.Status, d.Status.PriceHourly = 7, "new", "0.00893"
		events.SetCondition(d, v1alpha1.Created, true, "Created", "droplet 7 created")
		events.SetCondition(d, v1alpha1.Ready, false, "Booting", "droplet status is new")
		return d
	}
	active := func() *v1alpha1.Droplet {
		d := created()
		d.Status.Status, d.Status.PublicIPv4 = "active", "127.100.0.7"
		events.SetCondition(d, v1alpha1.Ready, true, "Active", "droplet is active")
		return d
	}
	for _, c := range []struct {
		name   string
		before func() *v1alpha1.Droplet
		write  func(d *v1alpha1.Droplet)
		reRun  bool
	}{
		{"the intent before the create", base, func(d *v1alpha1.Droplet) {
			d.Status.CreateBatch, d.Status.BootTag = "b1", "hfdo-boot-1"
			events.SetCondition(d, v1alpha1.Created, false, v1alpha1.ReasonCreating, "creating")
		}, false},
		{"waiting for room", base, func(d *v1alpha1.Droplet) {
			events.SetCondition(d, v1alpha1.Created, false, v1alpha1.ReasonWaitingForRoom, "held back")
		}, false},
		{"the state column and lastSynced", created, func(d *v1alpha1.Droplet) {
			d.Status.State, d.Status.Message = "Booting", "droplet 7 is new"
			d.Status.LastSynced = &metav1.Time{Time: time.Now()}
		}, false},
		{"active, not yet reachable", created, func(d *v1alpha1.Droplet) {
			d.Status.Status, d.Status.PublicIPv4 = "active", "127.100.0.7"
			events.SetCondition(d, v1alpha1.Ready, true, "Active", "droplet is active")
		}, true}, // the address changed
		{"Ready alone", func() *v1alpha1.Droplet {
			d := active()
			events.SetCondition(d, v1alpha1.Ready, false, "Booting", "droplet status is new")
			return d
		}, func(d *v1alpha1.Droplet) {
			events.SetCondition(d, v1alpha1.Ready, true, "Active", "droplet is active")
		}, false},
		{"Ready, with Reachable true already", func() *v1alpha1.Droplet {
			d := active()
			events.SetCondition(d, v1alpha1.Reachable, true, "LoggedIn", "logged in")
			events.SetCondition(d, v1alpha1.Ready, false, "Booting", "droplet status is off")
			return d
		}, func(d *v1alpha1.Droplet) {
			events.SetCondition(d, v1alpha1.Ready, true, "Active", "droplet is active")
		}, true},
		{"a login that fails while sshd starts", active, func(d *v1alpha1.Droplet) {
			events.SetCondition(d, v1alpha1.Reachable, false, sshprobe.ReasonUnreachable, "connection refused")
		}, false},
		{"the configuration", base, func(d *v1alpha1.Droplet) {
			events.SetCondition(d, v1alpha1.Configured, false, "InvalidConfig", "region: unknown")
		}, true},
		{"the droplet ID", base, func(d *v1alpha1.Droplet) { d.Status.DropletID = 7 }, true},
		{"a refused create", base, func(d *v1alpha1.Droplet) {
			events.SetCondition(d, v1alpha1.Created, false, "Rejected", "422")
		}, true},
		{"reachable", active, func(d *v1alpha1.Droplet) {
			events.SetCondition(d, v1alpha1.Reachable, true, "LoggedIn", "logged in")
		}, true},
		{"not reachable in time", active, func(d *v1alpha1.Droplet) {
			events.SetCondition(d, v1alpha1.Reachable, false, v1alpha1.ReasonReadyTimeout, "timed out")
		}, true},
		{"the price (cost labels)", base, func(d *v1alpha1.Droplet) { d.Status.PriceHourly = "0.00893" }, true},
		{"a label", created, func(d *v1alpha1.Droplet) { d.Labels = map[string]string{"a": "b"} }, true},
		{"a finalizer released", created, func(d *v1alpha1.Droplet) { d.Finalizers = nil }, true},
		{"deletion", created, func(d *v1alpha1.Droplet) { d.DeletionTimestamp = &metav1.Time{Time: time.Now()} }, true},
		{"the spec", created, func(d *v1alpha1.Droplet) { d.Spec.Size = "s-2vcpu-2gb" }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := c.before()
			if c.name == "a finalizer released" {
				before.Finalizers = []string{"wrangler.cattle.io/x"}
			}
			after := before.DeepCopy()
			c.write(after)
			after.ResourceVersion = "2"
			if got := !equality.Semantic.DeepEqual(viewOfDroplet(before), viewOfDroplet(after)); got != c.reRun {
				t.Fatalf("VM re-run: %v, want %v", got, c.reRun)
			}
		})
	}
}
