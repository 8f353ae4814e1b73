package droplet

import (
	"context"
	"slices"
	"testing"

	"github.com/digitalocean/godo"
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	hfcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
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

func newDeleteWorld(t *testing.T) (*fakedo.Server, *godo.Client, *handler) {
	t.Helper()
	do := newDeleteFake(t)
	client, err := digitalocean.NewClients(do.URL(), digitalocean.LimiterOptions{Disabled: true}).For(deleteToken)
	if err != nil {
		t.Fatal(err)
	}
	return do, client, &handler{vms: noVMs{}, droplets: dropletsWithCache{cache: byNameCache{}}}
}

// newDeleteFake is a fake DigitalOcean with deleteToken's account.
func newDeleteFake(t *testing.T) *fakedo.Server {
	t.Helper()
	do := fakedo.New(fakedo.Options{BootDelay: fakedo.NoDelay, RateLimits: fakedo.RateLimits{Disabled: true}})
	if err := do.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(do.Close)
	do.AddAccount(deleteToken, fakedo.AccountOptions{DropletLimit: 100})
	return do
}

func outOfBand(do *fakedo.Server, name string, tags ...string) int {
	return do.CreateDropletOutOfBand(deleteToken, godo.DropletCreateRequest{Name: name, Region: "nyc1",
		Size: "s-1vcpu-1gb", Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}, Tags: tags}).ID
}

func deletingDroplet(uid types.UID, id int, batch, createdReason string) *v1alpha1.Droplet {
	d := &v1alpha1.Droplet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm"}}
	d.Spec.Name = "vm"
	d.Spec.VirtualMachine = "vm"
	d.Spec.Tags = digitalocean.DropletTags(testInstallation, "ns", "vm", string(uid), nil)
	d.Status.DropletID = id
	d.Status.CreateBatch = batch
	v1alpha1.Created.True(d)
	v1alpha1.Created.Reason(d, createdReason)
	return d
}

func TestDeleteTargetsOfAnUnansweredCreateAreFoundByName(t *testing.T) {
	do, client, h := newDeleteWorld(t)
	// A create whose answer was lost: DigitalOcean made it, its ID was never recorded.
	ours := sentBy(testInstallation, "uid-1")
	outOfBand(do, "vm", ours...)
	outOfBand(do, "vm", sentBy("another-installation", "uid-9")...)
	outOfBand(do, "other", ours...)
	d := deletingDroplet("uid-1", 0, "", "Creating")
	v1alpha1.Created.False(d)

	targets := h.targetsOf(d)
	if targets.unanswered != d || len(targets.ids) != 0 || targets.batchable() {
		t.Fatalf("targets = %+v, want a lookup by name and nothing by id", targets)
	}
	if err := h.deleteEach(context.Background(), client, targets); err != nil {
		t.Fatal(err)
	}
	left := do.Droplets(deleteToken)
	if len(left) != 2 || slices.ContainsFunc(left, func(l godo.Droplet) bool { return l.Name == "vm" && slices.Equal(l.Tags, ours) }) {
		t.Errorf("left at DigitalOcean: %v, want the other installation's droplet of that name and another name's", left)
	}
	counts := do.RequestCounts()
	if counts[fakedo.RouteListDroplets+" 200"] != 1 || counts[fakedo.RouteDeleteDroplet+" 204"] != 1 || len(counts) != 2 {
		t.Errorf("requests %v, want one list by name and one delete", counts)
	}
}

func TestDeleteTargetsOfKnownDropletsGoByIDWhateverMadeThem(t *testing.T) {
	do, client, h := newDeleteWorld(t)
	single := outOfBand(do, "single", digitalocean.VMTag("uid-1"))
	batch := digitalocean.BatchTag("b1")
	multi := outOfBand(do, "multi", batch)
	adopted := outOfBand(do, "adopted", digitalocean.BatchTag("b0"))
	claimed := outOfBand(do, "claimed", digitalocean.VMTag("uid-4"))
	all := map[string]deleteTargets{
		"single-created": h.targetsOf(deletingDroplet("uid-1", single, "", "Created")),
		"multi-created":  h.targetsOf(deletingDroplet("uid-2", multi, batch, "Created")),
		"adopted":        h.targetsOf(deletingDroplet("uid-3", adopted, "", "Adopted")),
		"claimed":        h.targetsOf(deletingDroplet("uid-4", claimed, "", v1alpha1.ReasonClaimedFromPool)),
	}
	for name, targets := range all {
		if targets.unanswered != nil || len(targets.ids) != 1 || !targets.batchable() {
			t.Errorf("%s: targets = %+v, want its ID alone, batchable", name, targets)
		}
		if err := h.deleteEach(context.Background(), client, targets); err != nil {
			t.Fatal(err)
		}
		if !targets.settled(&h.notes) {
			t.Errorf("%s: not settled once DigitalOcean confirmed its delete", name)
		}
	}
	if left := do.Droplets(deleteToken); len(left) != 0 {
		t.Errorf("left at DigitalOcean: %v", left)
	}
	// Sent again (another cleanup of the same droplets): nothing goes.
	do.ResetRequests()
	for _, targets := range all {
		if err := h.deleteEach(context.Background(), client, targets); err != nil {
			t.Fatal(err)
		}
	}
	if counts := do.RequestCounts(); len(counts) != 0 {
		t.Errorf("deletes confirmed already were sent again: %v", counts)
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

// A droplet a VM took from a warm pool carries the pool member's tags, not
// the VM's: its deletes go by its claimed ID, never by the VM's tag, even
// while its status lacks the ID or the Created condition.
func TestDeleteTargetsOfAClaimedDropletAreItsID(t *testing.T) {
	_, _, h := newDeleteWorld(t)
	for name, d := range map[string]*v1alpha1.Droplet{
		"recorded":          deletingDroplet("uid-1", 42, "", v1alpha1.ReasonClaimedFromPool),
		"status without ID": deletingDroplet("uid-1", 0, "", v1alpha1.ReasonClaimedFromPool),
		"gone":              deletingDroplet("uid-1", 42, "", v1alpha1.ReasonClaimedDropletGone),
	} {
		d.Spec.ClaimedDropletID = 42
		if name == "gone" {
			v1alpha1.Created.False(d)
		}
		if name == "status without ID" {
			v1alpha1.Created.Unknown(d)
		}
		targets := h.targetsOf(d)
		if targets.unanswered != nil || len(targets.ids) != 1 || targets.ids[0] != 42 {
			t.Errorf("%s: targets = %+v, want droplet 42 alone", name, targets)
		}
	}
}

// A claimed droplet is taken over on the pool member's last observation,
// without a read: the first re-read that finds it gone records
// ClaimedDropletGone (never replaced, the VM fails) and reads no more until
// something changes, where any other droplet's 404 is only NotFound.
func TestFirstReadOfAGoneClaimedDropletSaysSo(t *testing.T) {
	_, client, h := newDeleteWorld(t)
	h.withPass(nil)
	claimed := deletingDroplet("uid-1", 42, "", v1alpha1.ReasonClaimedFromPool)
	claimed.Spec.ClaimedDropletID = 42
	claimed.Spec.Pool = &v1alpha1.PoolMembership{Name: "pool"}
	v1alpha1.Ready.True(claimed)
	requeue, err := h.refresh(context.Background(), client, claimed)
	if err != nil || requeue != 0 {
		t.Errorf("refresh = %v, %v; want no error and no next read", requeue, err)
	}
	if reason := v1alpha1.Created.GetReason(claimed); !v1alpha1.Created.IsFalse(claimed) || reason != v1alpha1.ReasonClaimedDropletGone {
		t.Errorf("Created = %s/%s, want False/%s", v1alpha1.Created.GetStatus(claimed), reason, v1alpha1.ReasonClaimedDropletGone)
	}
	if v1alpha1.Ready.IsTrue(claimed) {
		t.Error("Ready stays True for a droplet DigitalOcean does not know")
	}
	created := deletingDroplet("uid-2", 43, "", "Created")
	if _, err := h.refresh(context.Background(), client, created); err != nil {
		t.Fatal(err)
	}
	if v1alpha1.Created.GetReason(created) != "Created" || v1alpha1.Ready.GetReason(created) != "NotFound" {
		t.Errorf("a created droplet's 404: Created %s, Ready %s; want Created kept and Ready NotFound",
			v1alpha1.Created.GetReason(created), v1alpha1.Ready.GetReason(created))
	}
}
