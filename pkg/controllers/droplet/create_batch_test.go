package droplet

import (
	"context"
	"slices"
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	h.mem.readySince.Store(objectKey(d), time.Now().Add(-batchGather))
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
	h := &handler{ctx: context.Background(), vms: noVMs{}, droplets: droplets,
		recorder: record.NewFakeRecorder(100), backoff: digitalocean.NewBackoff()}
	leader := fresh("leader")

	_, err := h.createBatch(context.Background(), client, leader, []*v1alpha1.Droplet{fresh("mate-1"), fresh("mate-2")}, nil)
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
	if h.mem.inBatch(leader) {
		t.Error("the leader is still claimed by the batch after it returned")
	}
}
