package virtualmachine

import (
	"fmt"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/finalizer"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/tokensecret"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshkey"
	corecontrollers "github.com/rancher/wrangler/v3/pkg/generated/controllers/core/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// SharedKeyName names the Key, the key-pair Secret (and, for a plain-text
// token, the token Secret's prefix) that all VMs of an Environment with
// ssh_key_scope: environment share.
func SharedKeyName(envName string) string { return "hfdo-env-" + envName }

// sharedKeyObjects are the Environment's shared key pair Secret and Key,
// and its copy of a plain-text token, made once and owned by the
// Environment: no VM's apply may own (and so prune) what others use.
// It returns where the VMs find the key pair and the token.
func (h *handler) sharedKeyObjects(vm *hfv1.VirtualMachine, cfg *config.Droplet) (keyName string, token v1alpha1.SecretKeyRef, err error) {
	env, err := h.envs.Get(vm.Namespace, vm.Status.EnvironmentId)
	if err != nil {
		return "", token, err
	}
	return h.sharedKeyObjectsOf(env, cfg)
}

// EnsureSharedKey makes the Environment's shared key objects for a warm
// pool, exactly as for the Environment's VMs.
func EnsureSharedKey(secrets corecontrollers.SecretController, keys provcontrollers.KeyController,
	env *hfv1.Environment, cfg *config.Droplet) (keyName string, token v1alpha1.SecretKeyRef, err error) {
	return (&handler{secrets: secrets, keys: keys}).sharedKeyObjectsOf(env, cfg)
}

func (h *handler) sharedKeyObjectsOf(env *hfv1.Environment, cfg *config.Droplet) (keyName string, token v1alpha1.SecretKeyRef, err error) {
	name := SharedKeyName(env.Name)
	token = v1alpha1.SecretKeyRef{Name: cfg.TokenSecret, Key: config.TokenSecretKey}
	if cfg.Token != "" {
		token.Name = name + "-do-token"
		err = h.ensure(tokensecret.WithFinalizer(&corev1.Secret{ObjectMeta: sharedMeta(env, token.Name), Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{config.TokenSecretKey: []byte(cfg.Token)}}))
		if err != nil {
			return "", token, err
		}
	}
	if err := h.ensureSharedPair(env, name, cfg.SSHKeyType); err != nil {
		return "", token, err
	}
	err = h.ensure(&v1alpha1.Key{ObjectMeta: withFinalizer(sharedMeta(env, name), finalizer.KeyCleanupHandler), Spec: v1alpha1.KeySpec{
		Name:               digitalocean.KeyName(env.Namespace, name),
		PublicKeySecretRef: v1alpha1.SecretKeyRef{Name: name, Key: sshkey.PublicKeyField},
		TokenSecretRef:     token,
	}})
	return name, token, err
}

// ensureSharedPair makes the shared key pair once. It is never remade: the
// droplets already made accept only the first one.
func (h *handler) ensureSharedPair(env *hfv1.Environment, name string, keyType sshkey.Type) error {
	if _, err := h.secrets.Cache().Get(env.Namespace, name); err == nil {
		return nil
	}
	if _, err := h.secrets.Get(env.Namespace, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		return err
	}
	pair, err := sshkey.New(keyType, "hobbyfarm-"+name)
	if err != nil {
		return err
	}
	return h.ensure(&corev1.Secret{ObjectMeta: sharedMeta(env, name), Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{sshkey.PrivateKeyField: pair.PrivateKeyPEM, sshkey.PublicKeyField: []byte(pair.PublicKey)}})
}

// ensure creates obj unless it exists; an existing one is left as it is
// (a token Secret is brought up to date).
func (h *handler) ensure(obj runtime.Object) error {
	var err error
	switch o := obj.(type) {
	case *corev1.Secret:
		existing, getErr := h.secrets.Cache().Get(o.Namespace, o.Name)
		switch {
		case getErr == nil && o.Data[config.TokenSecretKey] != nil && string(existing.Data[config.TokenSecretKey]) != string(o.Data[config.TokenSecretKey]):
			updated := existing.DeepCopy()
			updated.Data = o.Data
			_, err = h.secrets.Update(updated)
		case getErr == nil:
			return nil
		default:
			_, err = h.secrets.Create(o)
		}
	case *v1alpha1.Key:
		if _, getErr := h.keys.Cache().Get(o.Namespace, o.Name); getErr == nil {
			return nil
		}
		_, err = h.keys.Create(o)
	default:
		return fmt.Errorf("cannot ensure a %T", obj)
	}
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func sharedMeta(env *hfv1.Environment, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:      name,
		Namespace: env.Namespace,
		Labels:    map[string]string{ProvisionerLabel: ProvisionerName, v1alpha1.EnvironmentLabel: env.Name},
		// Gone with the Environment, by the garbage collector; the Key's
		// finalizer deletes it in DigitalOcean first.
		OwnerReferences: []metav1.OwnerReference{{APIVersion: hfv1.SchemeGroupVersion.String(), Kind: "Environment",
			Name: env.Name, UID: env.UID}},
	}
}

// usesSharedKey: the VM's droplet exists and was made with its
// Environment's shared key, or none exists and the config asks for one.
// A droplet's key never changes, whatever the Environment says now.
func usesSharedKey(vm *hfv1.VirtualMachine, cfg *config.Droplet, existing *v1alpha1.Droplet) bool {
	if existing != nil && (existing.Status.DropletID != 0 || existing.Spec.ClaimedDropletID != 0) {
		return len(existing.Spec.KeyRefs) == 1 && existing.Spec.KeyRefs[0] == SharedKeyName(vm.Status.EnvironmentId)
	}
	return cfg != nil && cfg.SSHKeyScope == config.KeyScopeEnvironment
}
