package takeover

import (
	"context"
	"fmt"
	"slices"

	"github.com/digitalocean/godo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// onDroplet handles an alpha Droplet (see the package comment).
func (h *handler) onDroplet(_ string, d *v1alpha1.Droplet) (*v1alpha1.Droplet, error) {
	if !alpha.IsDroplet(d) {
		return d, nil
	}
	id := alpha.DropletOf(d).ID
	what := fmt.Sprintf("droplet %d", id)
	done, err := h.settle(d, d.Spec.Machine, alpha.DropletFinalizer, id, what, func() bool { return h.dropletRecorded(d, id) },
		func(ctx context.Context, c *godo.Client) (bool, error) {
			return digitalocean.DropletsOf(c).DeleteHeld(ctx, id)
		})
	if err != nil || !done {
		return d, err
	}
	released := d.DeepCopy()
	released.Finalizers = without(released.Finalizers, alpha.DropletFinalizer)
	return h.droplets.Update(released)
}

// onKey handles an alpha Key (see the package comment).
func (h *handler) onKey(_ string, k *v1alpha1.Key) (*v1alpha1.Key, error) {
	if !alpha.IsKey(k) {
		return k, nil
	}
	if k.DeletionTimestamp == nil {
		if err := h.deleteDuplicates(k); err != nil {
			return k, err
		}
	}
	id := alpha.KeyOf(k).ID
	what := fmt.Sprintf("SSH key %d", id)
	done, err := h.settle(k, k.Spec.Machine, alpha.KeyFinalizer, id, what, func() bool { return h.keyRecorded(k, id) },
		func(ctx context.Context, c *godo.Client) (bool, error) {
			return digitalocean.KeysOf(c).DeleteHeld(ctx, id, digitalocean.PriorityDelete)
		})
	if err != nil || !done {
		return k, err
	}
	released := k.DeepCopy()
	released.Finalizers = without(released.Finalizers, alpha.KeyFinalizer)
	return h.keys.Update(released)
}

// alphaObject is an alpha Droplet or Key.
type alphaObject interface {
	runtime.Object
	metav1.Object
}

// settle says whether obj's alpha finalizer may go now. An object not being
// deleted whose VM is gone is deleted first. recorded reports an object
// of ours that records id and deletes it with the VM; else del deletes id
// in DigitalOcean.
func (h *handler) settle(obj alphaObject, vmName, fin string, id int, what string, recorded func() bool,
	del func(context.Context, *godo.Client) (held bool, err error)) (bool, error) {
	log := logrus.WithField("vm", vmName).WithField("object", obj.GetName())
	if obj.GetDeletionTimestamp() == nil {
		vm, err := h.liveVM(obj, vmName)
		if err != nil || vm != nil {
			return false, err
		}
		log.Info("the original provisioner's object outlived its VM; deleting it, and its " + what + " in DigitalOcean")
		return false, h.deleteObject(obj)
	}
	if !slices.Contains(obj.GetFinalizers(), fin) {
		return false, nil
	}
	switch {
	case id == 0:
		log.Info("the original provisioner recorded no ID on this object, so nothing of it can be deleted in DigitalOcean; releasing it")
	case recorded():
		log.WithField("id", id).Info("the original provisioner's object is being deleted; its " + what + " is recorded by ours, which deletes it")
	case v1alpha1.ForceReleaseRequested(obj):
		message := fmt.Sprintf("%s is set: releasing the original provisioner's object without deleting its %s in DigitalOcean, where it may still exist and bill",
			v1alpha1.ForceReleaseAnnotation, what)
		log.Warn(message)
		h.recorder.Event(obj, corev1.EventTypeWarning, v1alpha1.ForceReleased, message)
	default:
		found, err := h.deleteEverywhere(del)
		if err != nil {
			log.WithError(err).Warn("deleting the original provisioner's " + what + " in DigitalOcean")
			return false, err
		}
		if found {
			log.WithField("id", id).Info("the original provisioner's " + what + " deleted in DigitalOcean")
		} else {
			log.WithField("id", id).Info("the original provisioner's " + what + " is gone from DigitalOcean already")
		}
	}
	return true, nil
}

func without(finalizers []string, f string) []string {
	return slices.DeleteFunc(slices.Clone(finalizers), func(s string) bool { return s == f })
}

// dropletRecorded: our Droplet of the VM records droplet id, and deletes it.
func (h *handler) dropletRecorded(d *v1alpha1.Droplet, id int) bool {
	ours, err := h.droplets.Cache().Get(d.Namespace, d.Spec.Machine)
	return err == nil && !alpha.IsDroplet(ours) && (ours.Spec.AdoptedDropletID == id || ours.Status.DropletID == id)
}

// keyRecorded: our Key of the VM records key id, and deletes it.
func (h *handler) keyRecorded(k *v1alpha1.Key, id int) bool {
	ours, err := h.keys.Cache().Get(k.Namespace, k.Spec.Machine)
	return err == nil && !alpha.IsKey(ours) && (ours.Spec.AdoptedKeyID == id || ours.Status.KeyID == id)
}

func (h *handler) deleteObject(obj alphaObject) error {
	var err error
	switch o := obj.(type) {
	case *v1alpha1.Droplet:
		err = h.droplets.Delete(o.Namespace, o.Name, nil)
	case *v1alpha1.Key:
		err = h.keys.Delete(o.Namespace, o.Name, nil)
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
