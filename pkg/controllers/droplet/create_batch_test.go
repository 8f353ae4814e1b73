package droplet

import (
	"context"
	"slices"
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/finalizer"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/rancher/wrangler/v3/pkg/generic"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

func TestSharesKeyTellsSharedFromPerVMKeys(t *testing.T) {
	perVM := &v1alpha1.Droplet{ObjectMeta: metav1.ObjectMeta{Name: "vm-1"}}
	perVM.Spec.KeyRefs = []string{"vm-1"}
	shared := perVM.DeepCopy()
	shared.Spec.KeyRefs = []string{"hfdo-env-key"}
	if sharesKey(perVM) || !sharesKey(shared) {
		t.Errorf("sharesKey(per-VM) = %v, sharesKey(shared) = %v; want false, true", sharesKey(perVM), sharesKey(shared))
	}
}

func TestGatheringWaitsOnceFromFirstReady(t *testing.T) {
	h := &handler{}
	d := &v1alpha1.Droplet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm-1"}}
	if wait := h.gathering(nil, d); wait <= 0 || wait > batchGather {
		t.Fatalf("first look waits %v, want (0, %v]", wait, batchGather)
	}
	// Counted from the first look, not restarted by later ones.
	h.notes.readySince.Store(cache.MetaObjectToName(d).String(), time.Now().Add(-batchGather))
	if wait := h.gathering(nil, d); wait > 0 {
		t.Errorf("after %v ready it still waits %v", batchGather, wait)
	}
}

// intentConflicts is a Droplet client whose status writes succeed, except
// the intent of the Droplet named failing, which conflicts.
type intentConflicts struct {
	provcontrollers.DropletController
	failing string
}

func (c *intentConflicts) UpdateStatus(d *v1alpha1.Droplet) (*v1alpha1.Droplet, error) {
	if d.Name == c.failing && d.Status.DropletID == 0 {
		return nil, apierrors.NewConflict(schema.GroupResource{Resource: "droplets"}, d.Name, nil)
	}
	return d.DeepCopy(), nil
}

func (c *intentConflicts) Enqueue(string, string)                     {}
func (c *intentConflicts) EnqueueAfter(string, string, time.Duration) {}

func TestBatchGoesWithoutALeaderWhoseIntentConflicts(t *testing.T) {
	do, client, _ := newDeleteWorld(t)
	fresh := func(name string) *v1alpha1.Droplet {
		d := &v1alpha1.Droplet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
		d.Spec.Name, d.Spec.VirtualMachine = name, name
		d.Spec.Region, d.Spec.Size, d.Spec.Image = "nyc1", "s-1vcpu-1gb", "ubuntu-22-04-x64"
		d.Spec.Tags = []string{digitalocean.VMTag("uid-" + name)}
		d.Spec.KeyRefs = []string{"shared"}
		return d
	}
	droplets := &intentConflicts{failing: "leader"}
	recorder := record.NewFakeRecorder(100)
	h := (&handler{ctx: context.Background(), vms: noVMs{}, droplets: droplets, recorder: recorder}).withPass(recorder)
	leader := fresh("leader")

	_, err := h.createBatch(context.Background(), client, leader, []*v1alpha1.Droplet{fresh("mate-1"), fresh("mate-2")}, nil, h.place(leader))
	if !apierrors.IsConflict(err) {
		t.Fatalf("createBatch returned %v, want the leader's conflict so that its pass is retried", err)
	}
	var names []string
	for _, d := range do.Droplets(deleteToken) {
		names = append(names, d.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"mate-1", "mate-2"}) {
		t.Errorf("droplets at DigitalOcean %v, want the two mates only (no create without its intent on record)", names)
	}
	if leader.Status.DropletID != 0 || v1alpha1.Created.GetReason(leader) != "" {
		t.Errorf("the leader's status changed although its intent was not written: %+v", leader.Status)
	}
	if h.notes.inBatch(leader) {
		t.Error("the leader is still claimed by the batch after it returned")
	}
}

// batchMates reads the Droplets awaiting their create from an index of the
// cache: those, and only those, that could go in d's multi-create.
func TestBatchMatesComeFromTheAwaitingIndex(t *testing.T) {
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	droplets := generic.NewCache[*v1alpha1.Droplet](store, schema.GroupResource{Resource: "droplets"})
	droplets.AddIndexer(awaitingCreateIndex, awaitingCreate)
	start := time.Now()
	fresh := func(name string, age time.Duration) *v1alpha1.Droplet {
		d := &v1alpha1.Droplet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
			CreationTimestamp: metav1.NewTime(start.Add(-age)), Finalizers: []string{finalizer.Of(finalizer.DropletCleanupHandler)}}}
		d.Spec.Name, d.Spec.VirtualMachine = name, name
		d.Spec.Region, d.Spec.Size, d.Spec.Image = "nyc1", "s-1vcpu-1gb", "ubuntu-22-04-x64"
		d.Spec.Tags = []string{digitalocean.VMTag("uid-" + name)}
		d.Spec.KeyRefs = []string{"shared"}
		return d
	}
	leader := fresh("leader", 0)
	older, newer := fresh("older", 2*time.Second), fresh("newer", time.Second)
	created := fresh("created", 3*time.Second)
	created.Status.DropletID = 7
	ownKey := fresh("own-key", 3*time.Second)
	ownKey.Spec.KeyRefs = []string{ownKey.Name}
	otherKey := fresh("other-key", 3*time.Second)
	otherKey.Spec.KeyRefs = []string{"other"}
	otherSize := fresh("other-size", 3*time.Second)
	otherSize.Spec.Size = "s-2vcpu-2gb"
	otherNamespace := fresh("other-namespace", 3*time.Second)
	otherNamespace.Namespace = "elsewhere"
	deleting := fresh("deleting", 3*time.Second)
	deleting.DeletionTimestamp = &metav1.Time{Time: start}
	for _, d := range []*v1alpha1.Droplet{leader, newer, older, created, ownKey, otherKey, otherSize, otherNamespace, deleting} {
		if err := store.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	h := &handler{droplets: dropletsWithCache{cache: droplets}}
	names := func() []string {
		var out []string
		for _, m := range h.batchMates(leader) {
			out = append(out, m.Name)
		}
		return out
	}
	if got := names(); !slices.Equal(got, []string{"older", "newer"}) {
		t.Errorf("mates %v, want [older newer], oldest first", got)
	}

	// Once created, a Droplet leaves the index; one another worker's batch
	// is sending, or whose create this process sent, is left alone.
	older = older.DeepCopy()
	older.Status.DropletID = 8
	if err := store.Update(older); err != nil {
		t.Fatal(err)
	}
	if got := names(); !slices.Equal(got, []string{"newer"}) {
		t.Errorf("mates %v once older was created, want [newer]", got)
	}
	h.notes.claim(newer, "hfdo-batch:other")
	if got := names(); len(got) != 0 {
		t.Errorf("mates %v while another batch sends newer, want none", got)
	}
	h.notes.release(newer)
	h.notes.noteCreated(newer, 9)
	if got := names(); len(got) != 0 {
		t.Errorf("mates %v once newer's create was sent, want none", got)
	}
}
