package virtualmachine

import (
	"bytes"
	"maps"
	"slices"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// inPlace reports that the cache already holds every object of objs as
// desired, each controlled by the VM, and none of the VM's own objects
// that objs lacks (which apply would prune). Apply then has nothing to do,
// yet spends milliseconds of CPU per object decompressing and diffing its
// last-applied copy; a VM is handled again on every change of its Droplet
// or Key, and in a flood of a thousand VMs that CPU would limit the
// controller.
func (h *handler) inPlace(vm *hfv1.VirtualMachine, objs []runtime.Object) bool {
	given := map[string]bool{}
	for _, obj := range objs {
		id, ok := h.cachedAsDesired(vm, obj)
		if !ok {
			return false
		}
		given[id] = true
	}
	named := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: vm.Namespace, Name: name} }
	for _, own := range []runtime.Object{
		&corev1.Secret{ObjectMeta: named(TokenSecretName(vm))},
		&corev1.Secret{ObjectMeta: named(SSHSecretName(vm))},
		&v1alpha1.Key{ObjectMeta: named(vm.Name)},
		&v1alpha1.Droplet{ObjectMeta: named(vm.Name)},
	} {
		if id, cached, _ := h.cachedCopy(own); cached != nil && !given[id] {
			return false
		}
	}
	return true
}

// cachedAsDesired names obj and reports whether the cache has it as
// desired: same contents and metadata, controlled by the VM (so apply made
// it; apply's own annotations come on top).
func (h *handler) cachedAsDesired(vm *hfv1.VirtualMachine, obj runtime.Object) (string, bool) {
	id, cached, _ := h.cachedCopy(obj)
	switch o := obj.(type) {
	case *corev1.Secret:
		c, ok := cached.(*corev1.Secret)
		return id, ok && sameMeta(vm, c, o) && c.Type == o.Type && maps.EqualFunc(c.Data, o.Data, bytes.Equal)
	case *v1alpha1.Key:
		c, ok := cached.(*v1alpha1.Key)
		return id, ok && sameMeta(vm, c, o) && equality.Semantic.DeepEqual(c.Spec, o.Spec)
	case *v1alpha1.Droplet:
		c, ok := cached.(*v1alpha1.Droplet)
		return id, ok && sameMeta(vm, c, o) && equality.Semantic.DeepEqual(c.Spec, o.Spec)
	}
	return "", false
}

// cachedCopy names obj (a Secret, Key or Droplet of the VM, found by its
// namespace and name) and returns the cache's copy of it, nil if the cache
// lacks it. known is false for any other kind: the VM makes no other.
func (h *handler) cachedCopy(obj runtime.Object) (id string, cached runtime.Object, known bool) {
	switch o := obj.(type) {
	case *corev1.Secret:
		return "Secret/" + o.Name, cacheGet(h.secrets.Cache().Get, o.Namespace, o.Name), true
	case *v1alpha1.Key:
		return "Key/" + o.Name, cacheGet(h.keys.Cache().Get, o.Namespace, o.Name), true
	case *v1alpha1.Droplet:
		return "Droplet/" + o.Name, cacheGet(h.droplets.Cache().Get, o.Namespace, o.Name), true
	}
	return "", nil, false
}

// cacheGet is get's result as a runtime.Object: nil (never a typed nil)
// when the cache lacks it.
func cacheGet[T runtime.Object](get func(namespace, name string) (T, error), namespace, name string) runtime.Object {
	c, err := get(namespace, name)
	if err != nil {
		return nil
	}
	return c
}

// sameMeta: cached is controlled by vm and has desired's labels,
// annotations and finalizers (a token Secret made before it had one gets it).
func sameMeta(vm *hfv1.VirtualMachine, cached, desired metav1.Object) bool {
	return metav1.IsControlledBy(cached, vm) && contains(cached.GetLabels(), desired.GetLabels()) &&
		contains(cached.GetAnnotations(), desired.GetAnnotations()) &&
		!slices.ContainsFunc(desired.GetFinalizers(), func(f string) bool { return !slices.Contains(cached.GetFinalizers(), f) })
}

func contains(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func (h *handler) secretCached(namespace, name string) bool {
	_, err := h.secrets.Cache().Get(namespace, name)
	return err == nil
}
