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
// or Key, and in a flood of a thousand VMs that CPU was what limited the
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
	for id, cached := range map[string]bool{
		"Secret/" + TokenSecretName(vm): h.secretCached(vm.Namespace, TokenSecretName(vm)),
		"Secret/" + SSHSecretName(vm):   h.secretCached(vm.Namespace, SSHSecretName(vm)),
		"Key/" + vm.Name:                h.keyCached(vm.Namespace, vm.Name),
		"Droplet/" + vm.Name:            h.dropletCached(vm.Namespace, vm.Name),
	} {
		if cached && !given[id] {
			return false
		}
	}
	return true
}

// cachedAsDesired names obj and reports whether the cache has it as
// desired: same contents and metadata, controlled by the VM (so apply made
// it; apply's own annotations come on top).
func (h *handler) cachedAsDesired(vm *hfv1.VirtualMachine, obj runtime.Object) (string, bool) {
	switch o := obj.(type) {
	case *corev1.Secret:
		c, err := h.secrets.Cache().Get(o.Namespace, o.Name)
		return "Secret/" + o.Name, err == nil && sameMeta(vm, c, o) && c.Type == o.Type &&
			maps.EqualFunc(c.Data, o.Data, bytes.Equal)
	case *v1alpha1.Key:
		c, err := h.keys.Cache().Get(o.Namespace, o.Name)
		return "Key/" + o.Name, err == nil && sameMeta(vm, c, o) && equality.Semantic.DeepEqual(c.Spec, o.Spec)
	case *v1alpha1.Droplet:
		c, err := h.droplets.Cache().Get(o.Namespace, o.Name)
		return "Droplet/" + o.Name, err == nil && sameMeta(vm, c, o) && equality.Semantic.DeepEqual(c.Spec, o.Spec)
	}
	return "", false
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

func (h *handler) keyCached(namespace, name string) bool {
	_, err := h.keys.Cache().Get(namespace, name)
	return err == nil
}

func (h *handler) dropletCached(namespace, name string) bool {
	_, err := h.droplets.Cache().Get(namespace, name)
	return err == nil
}
