// Package tokensecret keeps a token Secret the provisioner made (a copy of
// an Environment's plain-text token) until no Droplet or Key needs it.
//
// Such a Secret is owned by its VM (or Environment) and goes with it by
// garbage collection. Gargantua v3.1 and later strip a deleting VM's
// finalizers, ours included, so the VM, and then the Secret, can go before
// the Droplet's and Key's cleanups have deleted anything in DigitalOcean;
// without the token they could not. The finalizer InUseFinalizer holds the
// Secret until they are done.
package tokensecret

import (
	"context"
	"slices"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	corecontrollers "github.com/rancher/wrangler/v3/pkg/generated/controllers/core/v1"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// InUseFinalizer is on every token Secret the provisioner makes. It is
// part of the API: never rename it.
const InUseFinalizer = "provisioning.hobbyfarm.io/token-in-use"

// HandlerName is part of the API too.
const HandlerName = "hf-provisioner-digitalocean-token-secret"

// recheck is how often a deleting token Secret looks for its users again
// should a removal be missed: each user's removal queues it (Register). A
// deleted VM's Key may wait minutes for droplet deletes to pause.
const recheck = 30 * time.Second

type handler struct {
	secrets  corecontrollers.SecretController
	droplets provcontrollers.DropletController
	keys     provcontrollers.KeyController
}

// Register wires the handler that releases InUseFinalizer.
func Register(ctx context.Context, c *controllers.Set) {
	secrets, droplets, keys := c.Secrets, c.Droplets, c.Keys
	h := &handler{secrets: secrets, droplets: droplets, keys: keys}
	secrets.OnChange(ctx, HandlerName, h.release)
	// A Droplet's or Key's removal may free the Secret it read.
	userGone := releaser(secrets.Cache(), secrets.Enqueue)
	for _, informer := range []cache.SharedIndexInformer{droplets.Informer(), keys.Informer()} {
		_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: userGone})
	}
}

// releaser is the handler of a Droplet's or Key's removal: it queues the
// token Secret that user read, if that Secret waits to be released. Only
// then: every pass of a Secret also re-runs each Environment, VM, Droplet
// and Key that reads it (their related-resource watches), so queueing an
// Environment's token Secret on each of an event's 1,000 removals would
// re-queue the whole fleet hundreds of times. A Secret deleted after the
// removal is queued by its own deletion.
func releaser(secrets corecontrollers.SecretCache, enqueue func(namespace, name string)) func(obj any) {
	return func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		namespace, name := secretRead(obj)
		if name == "" {
			return
		}
		if s, err := secrets.Get(namespace, name); err == nil && waitsForRelease(s) {
			enqueue(namespace, name)
		}
	}
}

// secretRead is the namespace and name of the token Secret a Droplet or Key reads.
func secretRead(obj any) (string, string) {
	switch o := obj.(type) {
	case *v1alpha1.Droplet:
		return o.Namespace, o.Spec.TokenSecretRef.Name
	case *v1alpha1.Key:
		return o.Namespace, o.Spec.TokenSecretRef.Name
	}
	return "", ""
}

// WithFinalizer puts InUseFinalizer on a token Secret being made.
func WithFinalizer(s *corev1.Secret) *corev1.Secret {
	if !slices.Contains(s.Finalizers, InUseFinalizer) {
		s.Finalizers = append(s.Finalizers, InUseFinalizer)
	}
	return s
}

// waitsForRelease: s is being deleted and InUseFinalizer holds it.
func waitsForRelease(s *corev1.Secret) bool {
	return s != nil && s.DeletionTimestamp != nil && slices.Contains(s.Finalizers, InUseFinalizer)
}

// release lets a deleting token Secret go once no Droplet or Key names it.
func (h *handler) release(_ string, s *corev1.Secret) (*corev1.Secret, error) {
	if !waitsForRelease(s) {
		return s, nil
	}
	log := logrus.WithField("secret", s.Name)
	if vm := s.Labels["hobbyfarm.io/virtualmachine"]; vm != "" {
		log = log.WithField("vm", vm) // a shared one belongs to an Environment
	}
	if user, err := h.user(s); err != nil || user != "" {
		if user != "" {
			log.WithField("user", user).Debug("token Secret deleted; kept until the Droplets and Keys that read it are cleaned up")
		}
		h.secrets.EnqueueAfter(s.Namespace, s.Name, recheck)
		return s, err
	}
	released := s.DeepCopy()
	released.Finalizers = slices.DeleteFunc(released.Finalizers, func(f string) bool { return f == InUseFinalizer })
	updated, err := h.secrets.Update(released)
	if apierrors.IsNotFound(err) {
		return s, nil
	}
	if err == nil {
		log.Info("token Secret no longer needed by any Droplet or Key; released")
	}
	return updated, err
}

// user names a Droplet or Key that still needs s, or "". The cache answers
// first; that it holds none is confirmed by the API, since a Secret
// released too early strands a droplet in DigitalOcean.
func (h *handler) user(s *corev1.Secret) (string, error) {
	if name := firstUser(s.Name, h.cachedUsers(s.Namespace)); name != "" {
		return name, nil
	}
	listed, err := h.listedUsers(s.Namespace)
	return firstUser(s.Name, listed), err
}

// tokenUser is a Droplet or Key and the token Secret it reads.
type tokenUser struct{ name, secret string }

func firstUser(secret string, users []tokenUser) string {
	for _, u := range users {
		if u.secret == secret {
			return u.name
		}
	}
	return ""
}

func (h *handler) cachedUsers(namespace string) []tokenUser {
	var out []tokenUser
	droplets, _ := h.droplets.Cache().List(namespace, labels.Everything())
	for _, d := range droplets {
		out = append(out, tokenUser{"Droplet " + d.Name, d.Spec.TokenSecretRef.Name})
	}
	keys, _ := h.keys.Cache().List(namespace, labels.Everything())
	for _, k := range keys {
		out = append(out, tokenUser{"Key " + k.Name, k.Spec.TokenSecretRef.Name})
	}
	return out
}

func (h *handler) listedUsers(namespace string) ([]tokenUser, error) {
	droplets, err := h.droplets.List(namespace, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	keys, err := h.keys.List(namespace, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []tokenUser
	for _, d := range droplets.Items {
		out = append(out, tokenUser{"Droplet " + d.Name, d.Spec.TokenSecretRef.Name})
	}
	for _, k := range keys.Items {
		out = append(out, tokenUser{"Key " + k.Name, k.Spec.TokenSecretRef.Name})
	}
	return out, nil
}
