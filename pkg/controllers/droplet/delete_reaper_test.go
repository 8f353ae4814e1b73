package droplet

import (
	"context"
	"maps"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/rancher/wrangler/v3/pkg/generic"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// oneCached is a cache holding a single object.
type oneCached[T runtime.Object] struct {
	generic.CacheInterface[T]
	obj T
}

func (c oneCached[T]) Get(_, name string) (T, error) {
	if m, _ := meta.Accessor(c.obj); m.GetName() != name {
		var none T
		return none, apierrors.NewNotFound(schema.GroupResource{}, name)
	}
	return c.obj, nil
}

type dropletsWithCache struct {
	provcontrollers.DropletController
	cache generic.CacheInterface[*v1alpha1.Droplet]
}

func (c dropletsWithCache) Cache() generic.CacheInterface[*v1alpha1.Droplet] { return c.cache }

func TestReaperDeletesADeletedVMsDropletOnce(t *testing.T) {
	do, _, _ := newDeleteWorld(t)
	tag := digitalocean.VMTag("uid-1")
	id := outOfBand(do, "vm", tag)
	d := deletingDroplet("uid-1", id, "", "Created")
	d.Spec.TokenSecretRef = v1alpha1.SecretKeyRef{Name: "token", Key: "token"}
	vm := &hfv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm", UID: "uid-1"}}
	token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "token"}, Data: map[string][]byte{"token": []byte(deleteToken)}}
	h := &handler{ctx: context.Background(), vms: oneCached[*hfv1.VirtualMachine]{obj: vm},
		droplets: dropletsWithCache{cache: oneCached[*v1alpha1.Droplet]{obj: d}},
		secrets:  oneCached[*corev1.Secret]{obj: token},
		clients:  digitalocean.NewClients(do.URL(), digitalocean.LimiterOptions{Disabled: true})}
	r := &reaper{h: h}

	// A VM that is not being deleted keeps its droplet.
	if retry, err := r.reap("ns/vm"); retry != 0 || err != nil || len(do.Droplets(deleteToken)) != 1 {
		t.Fatalf("live VM: retry %v, %d droplets; want its droplet kept", retry, len(do.Droplets(deleteToken)))
	}
	vm.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	if retry, err := r.reap("ns/vm"); retry != 0 || err != nil {
		t.Fatalf("retry %v after a delete DigitalOcean accepted", retry)
	}
	if left := do.Droplets(deleteToken); len(left) != 0 {
		t.Fatalf("droplets left after the reaper: %v", left)
	}
	if !h.targetsOf(d).settled(&h.notes) {
		t.Fatal("the reaper did not record what it deleted, so the cleanup would send it again")
	}
	// Seen again (another update of the deleting VM): nothing more is sent.
	before := do.RequestCounts()
	_, _ = r.reap("ns/vm")
	if after := do.RequestCounts(); !maps.Equal(after, before) {
		t.Errorf("requests went from %v to %v on a second look", before, after)
	}
}
