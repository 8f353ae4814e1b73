package droplet

import (
	"slices"
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/finalizer"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/rancher/wrangler/v3/pkg/generic"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

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
	h.mem.claim(newer, "hfdo-batch:other")
	if got := names(); len(got) != 0 {
		t.Errorf("mates %v while another batch sends newer, want none", got)
	}
	h.mem.release(newer)
	h.mem.noteCreated(newer, 9)
	if got := names(); len(got) != 0 {
		t.Errorf("mates %v once newer's create was sent, want none", got)
	}
}
