package droplet

import (
	"context"
	"testing"

	"github.com/digitalocean/godo"
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean/fake"
	hfcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

const deleteToken = "dop_v1_delete-test"

// noVMs is a VM cache without VMs.
type noVMs struct {
	hfcontrollers.VirtualMachineCache
}

func (noVMs) Get(_, name string) (*hfv1.VirtualMachine, error) {
	return nil, apierrors.NewNotFound(hfv1.Resource("virtualmachines"), name)
}

func newDeleteWorld(t *testing.T) (*fake.Server, *godo.Client, *handler) {
	t.Helper()
	do := newDeleteFake(t)
	client, err := digitalocean.NewClients(do.URL(), digitalocean.LimiterOptions{Disabled: true}).For(deleteToken)
	if err != nil {
		t.Fatal(err)
	}
	return do, client, &handler{vms: noVMs{}}
}

// newDeleteFake is a fake DigitalOcean with deleteToken's account.
func newDeleteFake(t *testing.T) *fake.Server {
	t.Helper()
	do := fake.New(fake.Options{BootDelay: fake.NoDelay, RateLimits: fake.RateLimits{Disabled: true}})
	if err := do.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(do.Close)
	do.AddAccount(deleteToken, fake.AccountOptions{DropletLimit: 100})
	return do
}

func outOfBand(do *fake.Server, name string, tags ...string) int {
	return do.CreateDropletOutOfBand(deleteToken, godo.DropletCreateRequest{Name: name, Region: "nyc1",
		Size: "s-1vcpu-1gb", Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}, Tags: tags}).ID
}

func deletingDroplet(uid types.UID, id int, batch, createdReason string) *v1alpha1.Droplet {
	d := &v1alpha1.Droplet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm"}}
	d.Spec.Name = "vm"
	d.Spec.VirtualMachine = "vm"
	d.Spec.Tags = []string{digitalocean.VMTag(string(uid))}
	d.Status.DropletID = id
	d.Status.CreateBatch = batch
	v1alpha1.Created.True(d)
	v1alpha1.Created.Reason(d, createdReason)
	return d
}

func TestDeleteTargetsOfSingleCreateUseTheVMTagOnce(t *testing.T) {
	do, client, h := newDeleteWorld(t)
	tag := digitalocean.VMTag("uid-1")
	id := outOfBand(do, "vm", tag)
	// A create whose answer was lost: same tag, id never recorded.
	outOfBand(do, "vm", tag)
	outOfBand(do, "other", digitalocean.VMTag("uid-2"))

	targets := h.deleteTargets(deletingDroplet("uid-1", id, "", "Created"))
	if targets.tag != tag || len(targets.byID) != 0 {
		t.Fatalf("targets = %+v, want the tag %s and nothing by id", targets, tag)
	}
	if err := targets.send(context.Background(), client); err != nil {
		t.Fatal(err)
	}
	left := do.Droplets(deleteToken)
	if len(left) != 1 || left[0].Name != "other" {
		t.Errorf("left at DigitalOcean: %v, want only the other VM's droplet", left)
	}
	counts := do.RequestCounts()
	if n := counts[fake.RouteDeleteDropletsByTag+" 204"]; n != 1 || len(counts) != 1 {
		t.Errorf("requests %v, want one delete by tag and nothing else (no confirming GET)", counts)
	}
}

func TestDeleteTargetsOfBatchAndAdoptedDropletsGoByID(t *testing.T) {
	do, client, h := newDeleteWorld(t)
	batch := digitalocean.BatchTag("b1")
	batchID := outOfBand(do, "vm", batch)
	adoptedID := outOfBand(do, "adopted", digitalocean.BatchTag("b0"))

	batchTargets := h.deleteTargets(deletingDroplet("uid-1", batchID, batch, "Created"))
	if batchTargets.tag != "" || len(batchTargets.byID) != 1 {
		t.Fatalf("multi-created: targets = %+v, want its id alone (it has no VM tag)", batchTargets)
	}
	// Adopted from an earlier Droplet's multi-create: by id, and the tag for what a lost create left.
	adopted := h.deleteTargets(deletingDroplet("uid-2", adoptedID, "", "Adopted"))
	if adopted.tag == "" || len(adopted.byID) != 1 {
		t.Fatalf("adopted: targets = %+v, want its id and the VM tag", adopted)
	}
	for _, targets := range []deleteTargets{batchTargets, adopted, batchTargets} {
		// The last one is gone already: DigitalOcean's 404 counts as done.
		if err := targets.send(context.Background(), client); err != nil {
			t.Fatal(err)
		}
	}
	if left := do.Droplets(deleteToken); len(left) != 0 {
		t.Errorf("left at DigitalOcean: %v", left)
	}
}

func TestDeleteTargetsEqualIgnoresOrder(t *testing.T) {
	a := deleteTargets{ids: []int{1, 2}, tag: "t"}
	if !a.equal(deleteTargets{ids: []int{2, 1}, tag: "t"}) {
		t.Error("same ids in another order are not equal")
	}
	// A droplet that appeared after the reaper's delete must be deleted again.
	if a.equal(deleteTargets{ids: []int{1, 2, 3}, tag: "t"}) || a.equal(deleteTargets{ids: []int{1, 2}}) {
		t.Error("different targets are equal")
	}
}

func TestReapableOnlySettledDropletsOfThatVM(t *testing.T) {
	vm := &hfv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vm", UID: "uid-1"}}
	settled := deletingDroplet("uid-1", 7, "", "Created")
	if !reapable(vm, settled) {
		t.Error("a created droplet of the VM is not reapable")
	}
	inFlight := deletingDroplet("uid-1", 0, "", "Creating")
	v1alpha1.Created.False(inFlight)
	otherVM := deletingDroplet("uid-9", 7, "", "Created")
	forced := deletingDroplet("uid-1", 7, "", "Created")
	forced.Annotations = map[string]string{v1alpha1.ForceReleaseAnnotation: "true"}
	forced.DeletionTimestamp = &metav1.Time{}
	for name, d := range map[string]*v1alpha1.Droplet{"create in flight": inFlight, "another VM's": otherVM, "force-released": forced} {
		if reapable(vm, d) {
			t.Errorf("%s droplet is reapable", name)
		}
	}
}
