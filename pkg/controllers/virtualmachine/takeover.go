package virtualmachine

// Taking over a VM the original alpha provisioner provisioned: its droplet,
// its DigitalOcean key and its key-pair Secret stay as they are (the user
// is on them), recorded by Droplet and Key objects of ours that adopt them
// by the IDs the alpha recorded. Nothing is created for such a VM.

import (
	"cmp"
	"fmt"
	"strings"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshkey"
	"github.com/rancher/wrangler/v3/pkg/generic"
	"github.com/sirupsen/logrus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// alphaVM is what the alpha left for one VM.
type alphaVM struct {
	droplet alpha.Droplet
	key     alpha.Key // ID 0: no key on record
	secret  string    // the key-pair Secret the VM's users log in with
}

// alphaOf is the alpha's record for vm, or nil when it has none with a
// droplet ID (the alpha never provisioned it, or its create never answered).
func (h *handler) alphaOf(vm *hfv1.VirtualMachine) *alphaVM {
	d, err := h.droplets.Cache().Get(vm.Namespace, alpha.DropletName(vm.Name))
	if err != nil || !alpha.IsDroplet(d) || d.Spec.Machine != vm.Name || !ownedOrUnowned(d.OwnerReferences, vm) {
		return nil
	}
	a := &alphaVM{droplet: alpha.DropletOf(d), secret: cmp.Or(vm.Spec.SecretName, alpha.SecretName(vm.Name))}
	if a.droplet.ID == 0 {
		return nil
	}
	if k, err := h.keys.Cache().Get(vm.Namespace, alpha.KeyName(vm.Name)); err == nil && alpha.IsKey(k) && k.Spec.Machine == vm.Name {
		a.key = alpha.KeyOf(k)
	}
	return a
}

// ownedOrUnowned: the alpha's object is vm's (not a deleted namesake's).
func ownedOrUnowned(refs []metav1.OwnerReference, vm *hfv1.VirtualMachine) bool {
	if len(refs) == 0 {
		return true
	}
	for _, ref := range refs {
		if ref.UID == vm.UID {
			return true
		}
	}
	return false
}

// takesOver: existing is no droplet of ours that a create made, so vm's
// objects are the takeover's (a placeholder may hold an invalid config's
// condition meanwhile).
func takesOver(a *alphaVM, existing *v1alpha1.Droplet) bool {
	return a != nil && (existing == nil || existing.Spec.AdoptedDropletID == a.droplet.ID || existing.Spec.Name == "")
}

// generateTakenOver is generate for a VM the alpha provisioned.
func (h *handler) generateTakenOver(vm *hfv1.VirtualMachine, status hfv1.VirtualMachineStatus, existing *v1alpha1.Droplet, a *alphaVM,
	cfg *config.Droplet, settings map[string]string, cfgErr error) ([]runtime.Object, hfv1.VirtualMachineStatus, error) {
	var objs []runtime.Object
	if cfgErr != nil {
		// The token is unknown: nothing to adopt with. The VM keeps running.
		objs = h.keepExisting(vm, existing)
	} else {
		ref := tokenRef(vm, cfg)
		if cfg.Token != "" {
			objs = append(objs, tokenSecret(vm, cfg.Token))
		}
		desired := droplet(vm, cfg, ref, h.opts.InstallationID)
		desired.Spec.Name = cmp.Or(a.droplet.Name, alpha.DropletName(vm.Name))
		desired.Spec.Region = cmp.Or(a.droplet.Region, cfg.Region)
		desired.Spec.Size = cmp.Or(a.droplet.Size, cfg.Size)
		desired.Spec.Image = cmp.Or(a.droplet.Image, cfg.Image)
		desired.Spec.KeyRefs = nil
		desired.Spec.AdoptedDropletID = a.droplet.ID
		if a.key.ID != 0 {
			k := key(vm, ref)
			k.Spec.Name = cmp.Or(a.key.Name, alpha.KeyName(vm.Name))
			k.Spec.PublicKeySecretRef = v1alpha1.SecretKeyRef{Name: a.secret, Key: sshkey.PublicKeyField}
			k.Spec.AdoptedKeyID = a.key.ID
			objs = append(objs, k)
			desired.Spec.KeyRefs = []string{vm.Name}
		}
		if existing != nil && existing.Spec.AdoptedDropletID == a.droplet.ID {
			desired.Spec = existing.Spec
		}
		objs = append(objs, desired)
	}
	labelCost(objs, vm, existing)
	h.reportConfig(vm, existing, cfgErr, settings, h.alphaKeyPairProblem(vm, a))
	if err := h.patchVM(vm, a.secret, cfg, existing); err != nil {
		logrus.WithField("vm", vm.Name).WithError(err).Warn("updating VM")
		return objs, status, err
	}
	if h.inPlace(vm, objs) || h.awaitingCache(vm, objs) {
		return nil, status, generic.ErrSkip
	}
	return objs, status, nil
}

// alphaKeyPairProblem: the alpha rewrote some VMs' Secrets after their
// droplet was made with the first pair, so their users cannot log in. The
// droplet accepts the key the alpha registered; the Secret must hold it.
func (h *handler) alphaKeyPairProblem(vm *hfv1.VirtualMachine, a *alphaVM) *keyPairProblem {
	secret, err := h.secrets.Cache().Get(vm.Namespace, a.secret)
	if err != nil || a.key.Fingerprint == "" {
		return nil
	}
	return keyPairMismatch(secret, a.key.Fingerprint)
}

// alphaChildren are the alpha's Droplet and Key objects of vm, which its
// cleanup deletes with ours: the takeover releases each (see package
// takeover) once nothing of it is left in DigitalOcean or an object of ours
// records its ID, so nothing hangs on the alpha's finalizers.
func (h *handler) alphaChildren(vm *hfv1.VirtualMachine) []child {
	ns := vm.Namespace
	dropletName, keyName := alpha.DropletName(vm.Name), alpha.KeyName(vm.Name)
	droplet := func(d *v1alpha1.Droplet, err error) (metav1.Object, string, error) {
		if err != nil {
			return nil, "", err
		}
		if !alpha.IsDroplet(d) || d.Spec.Machine != vm.Name {
			return nil, "", notFound(dropletName)
		}
		return d, fmt.Sprintf("the original provisioner's droplet %d", alpha.DropletOf(d).ID), nil
	}
	key := func(k *v1alpha1.Key, err error) (metav1.Object, string, error) {
		if err != nil {
			return nil, "", err
		}
		if !alpha.IsKey(k) || k.Spec.Machine != vm.Name {
			return nil, "", notFound(keyName)
		}
		return k, fmt.Sprintf("the original provisioner's SSH key %d", alpha.KeyOf(k).ID), nil
	}
	return []child{{
		cached: func() (metav1.Object, string, error) { return droplet(h.droplets.Cache().Get(ns, dropletName)) },
		get: func() (metav1.Object, string, error) {
			return droplet(h.droplets.Get(ns, dropletName, metav1.GetOptions{}))
		},
		patch: func(p []byte) error {
			_, err := h.droplets.Patch(ns, dropletName, types.MergePatchType, p)
			return err
		},
		delete: func() error { return h.droplets.Delete(ns, dropletName, nil) },
	}, {
		cached: func() (metav1.Object, string, error) { return key(h.keys.Cache().Get(ns, keyName)) },
		get:    func() (metav1.Object, string, error) { return key(h.keys.Get(ns, keyName, metav1.GetOptions{})) },
		patch: func(p []byte) error {
			_, err := h.keys.Patch(ns, keyName, types.MergePatchType, p)
			return err
		},
		delete: func() error { return h.keys.Delete(ns, keyName, nil) },
	}}
}

func notFound(name string) error {
	return apierrors.NewNotFound(v1alpha1.Resource("droplets"), name)
}

// alphaObjectVM is the VM an alpha Droplet or Key named name is of, or "";
// obj is nil once it is gone, and its name says then.
func alphaObjectVM(name string, obj runtime.Object) string {
	switch o := obj.(type) {
	case *v1alpha1.Droplet:
		if alpha.IsDroplet(o) {
			return o.Spec.Machine
		}
	case *v1alpha1.Key:
		if alpha.IsKey(o) {
			return o.Spec.Machine
		}
	case nil:
		for _, suffix := range []string{alpha.KeyName(""), alpha.DropletName("")} {
			if vm, ok := strings.CutSuffix(name, suffix); ok {
				return vm
			}
		}
	}
	return ""
}
