package virtualmachine

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/finalizer"
	"github.com/rancher/wrangler/v3/pkg/generic"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// cleanupPoll re-checks a deleting VM in case a watch event is missed.
const cleanupPoll = 10 * time.Second

// forceReleasePatch sets v1alpha1.ForceReleaseAnnotation on a Droplet or Key.
var forceReleasePatch, _ = json.Marshal(map[string]interface{}{
	"metadata": map[string]interface{}{"annotations": map[string]string{v1alpha1.ForceReleaseAnnotation: "true"}}})

// cleanup hands a deleted VM to the cleanup queue (see cleanupQueue) and
// keeps wrangler's remove handler from releasing the finalizer: the queue
// releases it once cleanUp has seen the Droplet and Key gone.
func (h *handler) cleanup(key string, vm *hfv1.VirtualMachine) (*hfv1.VirtualMachine, error) {
	h.cleanups.Add(key)
	return vm, generic.ErrSkip
}

// cleanUp deletes the deleted VM key's Droplet and Key, whose own
// finalizers remove them from DigitalOcean, and keeps the VM's finalizer
// until the Droplet is gone and the Key is gone or handed off (see
// keyHandedOff), and Gargantua's VM set finalizer too (see
// GargantuaVMSetFinalizer). Other finalizers on the VM are not ours to
// touch. A VM with v1alpha1.ForceReleaseAnnotation passes it on to its Droplet and
// Key, which then go without deleting anything in DigitalOcean. It returns
// when to look again while they remain.
func (h *handler) cleanUp(key string) (time.Duration, error) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return noRecheck, nil
	}
	vm, err := h.vms.Cache().Get(namespace, name)
	if apierrors.IsNotFound(err) {
		return noRecheck, nil
	} else if err != nil {
		return noRecheck, err
	}
	if vm.DeletionTimestamp == nil || !(hasCleanupFinalizer(vm) || hasAlphaFinalizer(vm)) {
		return noRecheck, nil
	}
	pending, err := h.deleteChildren(vm)
	if err != nil {
		return noRecheck, err
	}
	if pending {
		// The Droplet's and Key's removal queues the VM again; the poll is a
		// safety net.
		return cleanupPoll, nil
	}
	if wait := waitForGargantua(vm, time.Now()); wait > 0 {
		// Gargantua's removal of its finalizer queues the VM again.
		return wait, nil
	}
	return noRecheck, h.release(vm, h.handedOffKey(vm))
}

// handedOffKey is vm's Key if it deletes its key on its own after vm is
// gone (keyHandedOff), or nil.
func (h *handler) handedOffKey(vm *hfv1.VirtualMachine) *v1alpha1.Key {
	if k, err := h.keys.Cache().Get(vm.Namespace, vm.Name); err == nil && keyHandedOff(k) {
		return k
	}
	return nil
}

// deleteChildren deletes what is left of vm's Droplet and Key and says
// whether anything is left.
func (h *handler) deleteChildren(vm *hfv1.VirtualMachine) (pending bool, err error) {
	log := logrus.WithField("vm", vm.Name)
	force := v1alpha1.ForceReleaseRequested(vm)
	// What a force release passes the annotation to, for the VM's Event.
	var forced []string

	deleting := false
	// A force release reaches the Key too: it is never handed off then.
	left, err := remaining(h.children(vm, !force))
	if err != nil {
		return true, err
	}
	for _, p := range left {
		if force && !v1alpha1.HasForceReleaseAnnotation(p.obj) {
			if err := p.patch(forceReleasePatch); err != nil && !apierrors.IsNotFound(err) {
				return true, err
			}
			forced = append(forced, p.what)
		}
		if p.obj.GetDeletionTimestamp() == nil && !h.deleteSent(vm, p.obj) {
			if err := p.delete(); err != nil && !apierrors.IsNotFound(err) {
				return true, err
			}
			deleting = true
			h.noteDeleteSent(vm, p.obj)
		}
	}
	if deleting {
		log.Info("VM deleted; deleting its droplet")
		h.recorder.Event(vm, corev1.EventTypeNormal, "Deleting", "deleting the DigitalOcean droplet and key")
	}
	if len(forced) > 0 {
		message := fmt.Sprintf("%s is set: releasing the VM's Droplet and Key without deleting in DigitalOcean; %s may still exist there and bill",
			v1alpha1.ForceReleaseAnnotation, strings.Join(forced, " and "))
		log.Warn(message)
		h.recorder.Event(vm, corev1.EventTypeWarning, v1alpha1.ForceReleased, message)
	}
	return len(left) > 0, nil
}

// release deletes the VM's key pair and token Secrets and removes its
// finalizer, once its Droplet is gone and its Key gone or handedOff.
func (h *handler) release(vm *hfv1.VirtualMachine, handedOff *v1alpha1.Key) error {
	log := logrus.WithField("vm", vm.Name)
	// Only now may the token go; the key pair is useless without the droplet.
	// Garbage collection would get them too, but not while another
	// controller's finalizer keeps the VM.
	for _, name := range []string{SSHSecretName(vm), TokenSecretName(vm)} {
		if !h.secretCached(vm.Namespace, name) {
			// Never made (a shared key, a token Secret) or gone already; one
			// made so recently that the cache lacks it goes with the VM, by
			// garbage collection.
			continue
		}
		if err := h.secrets.Delete(vm.Namespace, name, nil); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	released := vm.DeepCopy()
	// The original provisioner's finalizer goes too: the cleanup covered
	// what it made (its Droplet and Key objects are among the children).
	released.Finalizers = slices.DeleteFunc(released.Finalizers, func(f string) bool {
		return f == finalizer.Of(finalizer.VMCleanupHandler) || f == alpha.VMFinalizer
	})
	// Sent from the cached VM's resourceVersion: a stale copy conflicts and
	// is tried again, never writes old finalizers back.
	_, err := h.updateWithOwnSpec(released)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	h.patchedFrom.Delete(vm.UID)
	h.applied.Delete(vm.UID)
	h.deletesSent.Delete(vm.UID)
	if err != nil {
		// Gone: released already, by this queue's previous pass (a cache
		// lagging that release sent the VM here again) or by Gargantua
		// stripping every finalizer. That pass's log line and Event stand.
		return nil
	}
	if v1alpha1.ForceReleaseRequested(vm) {
		// The Droplet's and Key's own ForceReleased Events name what is left.
		log.Warn("Droplet and Key released by force; releasing VM")
		return nil
	}
	if slices.Contains(vm.Finalizers, GargantuaVMSetFinalizer) {
		message := gargantuaFinalizerStuck()
		log.Warn(message)
		h.recorder.Event(vm, corev1.EventTypeWarning, "GargantuaFinalizerRemains", message)
		return nil
	}
	if k := handedOff; k != nil {
		log.WithField("key", keyIDOf(k)).Info("droplet is gone from DigitalOcean; releasing VM; its SSH key is deleted once droplet deletes pause")
		h.recorder.Event(vm, corev1.EventTypeNormal, "Deleted", fmt.Sprintf(
			"DigitalOcean droplet deleted; SSH key %d follows once droplet deletes pause (Key %s keeps its finalizer until then)", keyIDOf(k), k.Name))
		return nil
	}
	log.Info("droplet and key are gone from DigitalOcean; releasing VM")
	h.recorder.Event(vm, corev1.EventTypeNormal, "Deleted", "DigitalOcean droplet and key deleted")
	return nil
}

// child is a Droplet or Key the VM waits for.
type child struct {
	// cached and get read it from the cache and from the API, and say what
	// force-releasing it may leave in DigitalOcean.
	cached, get func() (metav1.Object, string, error)
	patch       func(mergePatch []byte) error
	delete      func() error
	// handedOff, when set, says the VM need not wait for it any more.
	handedOff func(metav1.Object) bool
}

// keyHandedOff: k deletes its key in DigitalOcean by ID on its own, after
// the droplets (see package key), and its finalizer keeps that duty across
// restarts, so the VM need not wait for it. A Key that does not know its
// key's ID may need the VM's key-pair Secret (it deletes by fingerprint),
// which goes with the VM: the VM waits for that one.
func keyHandedOff(obj metav1.Object) bool {
	k, ok := obj.(*v1alpha1.Key)
	return ok && k.DeletionTimestamp != nil && finalizer.Has(k, finalizer.KeyCleanupHandler) &&
		(k.Status.KeyID != 0 || k.Spec.AdoptedKeyID != 0)
}

// keyIDOf is the DigitalOcean key a Key deletes.
func keyIDOf(k *v1alpha1.Key) int { return cmp.Or(k.Status.KeyID, k.Spec.AdoptedKeyID) }

func handOffIf(on bool, handedOff func(metav1.Object) bool) func(metav1.Object) bool {
	if !on {
		return nil
	}
	return handedOff
}

// present is a child that still exists, and what force-releasing it may
// leave in DigitalOcean.
type present struct {
	child
	obj  metav1.Object
	what string
}

// remaining returns the children that still exist and are not handed
// off. The cache is asked first: one child there is reason enough to wait,
// and a deleting VM is looked at again on each of its children's writes.
// Only when the cache shows none does the API confirm it, since releasing
// the finalizer on a stale cache would be the one unrecoverable mistake
// here. (Confirming a missing child on every pass cost one GET more per
// deleted VM: a shared key's VM never has a Key of its own.)
func remaining(children []child) ([]present, error) {
	for _, read := range []func(child) (metav1.Object, string, error){
		func(c child) (metav1.Object, string, error) { return c.cached() },
		func(c child) (metav1.Object, string, error) { return c.get() },
	} {
		var left []present
		for _, c := range children {
			obj, what, err := read(c)
			if apierrors.IsNotFound(err) {
				continue
			} else if err != nil {
				return nil, err
			}
			if c.handedOff != nil && c.handedOff(obj) {
				continue
			}
			left = append(left, present{c, obj, what})
		}
		if len(left) > 0 {
			return left, nil
		}
	}
	return nil, nil
}

// children are vm's Droplet and Key (and the original provisioner's
// objects); with handOff, a Key that deletes its key on its own is not
// waited for.
func (h *handler) children(vm *hfv1.VirtualMachine, handOff bool) []child {
	ns, name := vm.Namespace, vm.Name
	describeDroplet := func(d *v1alpha1.Droplet, err error) (metav1.Object, string, error) {
		if err != nil {
			return nil, "", err
		}
		if d.Status.DropletID != 0 {
			return d, fmt.Sprintf("droplet %d", d.Status.DropletID), nil
		}
		return d, "the droplet named " + d.Spec.Name + ", if one was made,", nil
	}
	describeKey := func(k *v1alpha1.Key, err error) (metav1.Object, string, error) {
		if err != nil {
			return nil, "", err
		}
		if k.Status.KeyID != 0 {
			return k, fmt.Sprintf("SSH key %d", k.Status.KeyID), nil
		}
		return k, "its SSH key", nil
	}
	return append([]child{{
		cached: func() (metav1.Object, string, error) { return describeDroplet(h.droplets.Cache().Get(ns, name)) },
		get: func() (metav1.Object, string, error) {
			return describeDroplet(h.droplets.Get(ns, name, metav1.GetOptions{}))
		},
		patch: func(p []byte) error {
			_, err := h.droplets.Patch(ns, name, types.MergePatchType, p)
			return err
		},
		delete: func() error { return h.droplets.Delete(ns, name, nil) },
	}, {
		cached: func() (metav1.Object, string, error) { return describeKey(h.keys.Cache().Get(ns, name)) },
		get:    func() (metav1.Object, string, error) { return describeKey(h.keys.Get(ns, name, metav1.GetOptions{})) },
		patch: func(p []byte) error {
			_, err := h.keys.Patch(ns, name, types.MergePatchType, p)
			return err
		},
		delete:    func() error { return h.keys.Delete(ns, name, nil) },
		handedOff: handOffIf(handOff, keyHandedOff),
	}}, h.alphaChildren(vm)...)
}

// deleteSent: this process deleted obj already, though the cache may not
// show it yet. One of the two children's watch events re-runs the cleanup
// while the other's is still on its way; deleting that one again would
// repeat the log line and the Event.
func (h *handler) deleteSent(vm *hfv1.VirtualMachine, obj metav1.Object) bool {
	sent, _ := h.deletesSent.Load(vm.UID)
	return sent != nil && slices.Contains(sent.([]types.UID), obj.GetUID())
}

func (h *handler) noteDeleteSent(vm *hfv1.VirtualMachine, obj metav1.Object) {
	var sent []types.UID
	if v, ok := h.deletesSent.Load(vm.UID); ok {
		sent = v.([]types.UID)
	}
	h.deletesSent.Store(vm.UID, append(slices.Clone(sent), obj.GetUID()))
}
