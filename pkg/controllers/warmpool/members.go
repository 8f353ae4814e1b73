package warmpool

import (
	"slices"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/finalizer"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/virtualmachine"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshkey"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// memberMeta is the metadata of a member's Droplet, Key or Secret: owned
// by the pool, labelled with it, and with the Environment and template a
// VM's objects carry (the cost metric reads the Environment).
func memberMeta(pool *v1alpha1.WarmPool, name string) metav1.ObjectMeta {
	meta := metav1.ObjectMeta{
		Name:      name,
		Namespace: pool.Namespace,
		Labels:    map[string]string{v1alpha1.WarmPoolLabel: pool.Name, virtualmachine.ProvisionerLabel: virtualmachine.ProvisionerName},
		Annotations: map[string]string{
			v1alpha1.EnvironmentAnnotation: pool.Spec.Environment,
			v1alpha1.TemplateAnnotation:    pool.Spec.Template,
		},
	}
	ownedByPool(&meta, pool)
	return meta
}

// sharedKey reports a pool whose members use the Environment's shared Key.
func sharedKey(pool *v1alpha1.WarmPool) bool { return len(pool.Spec.Droplet.KeyRefs) > 0 }

// ownKey reports a member made with a key of its own, whatever the pool
// uses now.
func ownKey(d *v1alpha1.Droplet) bool { return slices.Equal(d.Spec.KeyRefs, []string{d.Name}) }

// memberDroplet is a member made with the pool's request, a name of its
// own and a fresh identity for adopt-by-tag recovery.
func memberDroplet(pool *v1alpha1.WarmPool, name, installationID string) *v1alpha1.Droplet {
	spec := *pool.Spec.Droplet.DeepCopy()
	spec.Name = name
	spec.VirtualMachine = ""
	spec.Tags = digitalocean.PoolDropletTags(installationID, pool.Namespace, string(uuid.NewUUID()), string(pool.UID), pool.Spec.Droplet.Tags)
	spec.Pool = &v1alpha1.PoolMembership{Name: pool.Name, RequestHash: pool.Spec.RequestHash}
	if !sharedKey(pool) {
		spec.KeyRefs = []string{name}
	}
	return &v1alpha1.Droplet{ObjectMeta: virtualmachine.WithFinalizer(memberMeta(pool, name), finalizer.DropletCleanupHandler), Spec: spec}
}

func memberKey(pool *v1alpha1.WarmPool, name string) *v1alpha1.Key {
	return &v1alpha1.Key{
		ObjectMeta: virtualmachine.WithFinalizer(memberMeta(pool, name), finalizer.KeyCleanupHandler),
		Spec: v1alpha1.KeySpec{
			Name:               digitalocean.KeyName(pool.Namespace, name),
			PublicKeySecretRef: v1alpha1.SecretKeyRef{Name: memberSecretName(name), Key: sshkey.PublicKeyField},
			TokenSecretRef:     pool.Spec.Droplet.TokenSecretRef,
		},
	}
}

func memberSecret(pool *v1alpha1.WarmPool, name string, pair *sshkey.Pair) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: memberMeta(pool, memberSecretName(name)),
		Type:       corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			sshkey.PrivateKeyField: pair.PrivateKeyPEM,
			sshkey.PublicKeyField:  []byte(pair.PublicKey),
		},
	}
}

// fill creates n members: the key pair's Secret, then the Key, then the
// Droplet, each with a plain create. A crash between them leaves a
// partial set that cleanupPartial finds by label.
func (h *handler) fill(pool *v1alpha1.WarmPool, n int) error {
	for range n {
		name := newMemberName()
		log := logrus.WithField("pool", pool.Name).WithField("member", name)
		if !sharedKey(pool) {
			pair, err := sshkey.New(keyType(pool), "hobbyfarm-"+name)
			if err != nil {
				return err
			}
			if _, err := h.secrets.Create(memberSecret(pool, name, pair)); err != nil {
				return err
			}
			if _, err := h.keys.Create(memberKey(pool, name)); err != nil {
				return err
			}
		}
		if _, err := h.droplets.Create(memberDroplet(pool, name, h.opts.InstallationID)); err != nil {
			return err
		}
		h.expected.add(pool.UID, name, time.Now())
		log.Info("warm pool member created")
	}
	return nil
}

// deleteMember deletes a member's Droplet and Key; the Secret goes once
// both are gone (cleanupPartial), as the Key's cleanup may still read it.
func (h *handler) deleteMember(pool *v1alpha1.WarmPool, d *v1alpha1.Droplet) error {
	if d.DeletionTimestamp == nil {
		if err := h.droplets.Delete(d.Namespace, d.Name, nil); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	if !ownKey(d) {
		return nil
	}
	if k, err := h.keys.Cache().Get(d.Namespace, d.Name); err == nil && k.DeletionTimestamp == nil && isControlledBy(k, string(pool.UID)) {
		if err := h.keys.Delete(d.Namespace, d.Name, nil); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}
