package virtualmachine

import (
	"testing"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	corecontrollers "github.com/rancher/wrangler/v3/pkg/generated/controllers/core/v1"
	"github.com/rancher/wrangler/v3/pkg/generic"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

type cachedSecrets struct {
	corecontrollers.SecretController
	cache testutil.NamedCache[*corev1.Secret]
}

func (f cachedSecrets) Cache() generic.CacheInterface[*corev1.Secret] { return f.cache }

type cachedKeys struct {
	provcontrollers.KeyController
	cache testutil.NamedCache[*v1alpha1.Key]
}

func (f cachedKeys) Cache() generic.CacheInterface[*v1alpha1.Key] { return f.cache }

type cachedDroplets struct {
	provcontrollers.DropletController
	cache testutil.NamedCache[*v1alpha1.Droplet]
}

func (f cachedDroplets) Cache() generic.CacheInterface[*v1alpha1.Droplet] { return f.cache }

// Apply is skipped only when the cache holds each desired object as
// desired and none of the VM's objects that apply would prune.
func TestInPlaceOnlyWhenTheCacheHoldsExactlyWhatApplyWould(t *testing.T) {
	vm := &hfv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "ns", UID: "u1"}}
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "ns", Name: name, OwnerReferences: []metav1.OwnerReference{
			*metav1.NewControllerRef(vm, hfv1.SchemeGroupVersion.WithKind("VirtualMachine"))}}
	}
	key := &v1alpha1.Key{ObjectMeta: meta("vm")}
	droplet := &v1alpha1.Droplet{ObjectMeta: meta("vm"), Spec: v1alpha1.DropletSpec{VirtualMachine: "vm", Region: "ams3"}}
	objs := []runtime.Object{key, droplet}
	handlerWith := func(secrets map[string]*corev1.Secret, keys map[string]*v1alpha1.Key, droplets map[string]*v1alpha1.Droplet) *handler {
		return &handler{secrets: cachedSecrets{cache: testutil.NamedCache[*corev1.Secret]{Objs: secrets}},
			keys:     cachedKeys{cache: testutil.NamedCache[*v1alpha1.Key]{Objs: keys}},
			droplets: cachedDroplets{cache: testutil.NamedCache[*v1alpha1.Droplet]{Objs: droplets}}}
	}
	other := droplet.DeepCopy()
	other.Spec.Region = "fra1"
	foreign := droplet.DeepCopy()
	foreign.OwnerReferences = nil

	for _, c := range []struct {
		name     string
		h        *handler
		inPlace  bool
		uncached bool
	}{
		{"all cached as desired", handlerWith(nil, map[string]*v1alpha1.Key{"vm": key}, map[string]*v1alpha1.Droplet{"vm": droplet}), true, false},
		{"Droplet not cached", handlerWith(nil, map[string]*v1alpha1.Key{"vm": key}, nil), false, true},
		{"Droplet cached with another spec", handlerWith(nil, map[string]*v1alpha1.Key{"vm": key}, map[string]*v1alpha1.Droplet{"vm": other}), false, false},
		{"Droplet cached, not the VM's", handlerWith(nil, map[string]*v1alpha1.Key{"vm": key}, map[string]*v1alpha1.Droplet{"vm": foreign}), false, false},
		{"a token Secret apply would prune", handlerWith(map[string]*corev1.Secret{TokenSecretName(vm): {ObjectMeta: meta(TokenSecretName(vm))}},
			map[string]*v1alpha1.Key{"vm": key}, map[string]*v1alpha1.Droplet{"vm": droplet}), false, false},
	} {
		if got := c.h.inPlace(vm, objs); got != c.inPlace {
			t.Errorf("%s: in place %v, want %v", c.name, got, c.inPlace)
		}
		if got := c.h.anyUncached(objs); got != c.uncached {
			t.Errorf("%s: any uncached %v, want %v", c.name, got, c.uncached)
		}
	}
	h := handlerWith(nil, map[string]*v1alpha1.Key{"vm": key}, map[string]*v1alpha1.Droplet{"vm": droplet})
	if h.inPlace(vm, []runtime.Object{key}) {
		t.Error("the Droplet is cached but no longer desired: apply must prune it")
	}
}
