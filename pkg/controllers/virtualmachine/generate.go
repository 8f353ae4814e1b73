package virtualmachine

import (
	"errors"
	"fmt"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/statecolumn"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshkey"
	"github.com/rancher/wrangler/v3/pkg/generic"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// generate returns the objects a VM needs. It never changes the VM status it
// is given: the generated handler would write the whole status back, and
// Gargantua owns most of it, so our fields are patched separately.
func (h *handler) generate(vm *hfv1.VirtualMachine, status hfv1.VirtualMachineStatus) ([]runtime.Object, hfv1.VirtualMachineStatus, error) {
	if !Eligible(vm) || vm.DeletionTimestamp != nil {
		return nil, status, generic.ErrSkip
	}
	log := logrus.WithField("vm", vm.Name)

	existing, err := h.droplets.Cache().Get(vm.Namespace, vm.Name)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, status, err
	}
	if apierrors.IsNotFound(err) {
		existing = nil
	}

	cfg, settings, cfgErr := h.resolve(vm)
	if a := h.alphaOf(vm); takesOver(a, existing) {
		return h.generateTakenOver(vm, status, existing, a, cfg, settings, cfgErr)
	}
	var keyType sshkey.Type // unknown while the config is invalid: no pair is made then
	if cfg != nil {
		keyType = cfg.SSHKeyType
	}
	shared := usesSharedKey(vm, cfg, existing)
	var fromPool *taken
	if existing == nil && cfgErr == nil {
		if fromPool, err = h.claimFromPool(vm, cfg, shared); err != nil {
			return nil, status, err
		}
	} else if existing != nil {
		h.claims.Delete(vm.UID)
	}
	var objs []runtime.Object
	var keyProblem *keyPairProblem
	switch {
	case shared:
	case fromPool != nil:
		// The droplet accepts only the member's key pair.
		objs = append(objs, sshSecret(vm, fromPool.privateKey, string(fromPool.publicKey)))
	default:
		var keySecret *corev1.Secret
		if keySecret, keyProblem, err = h.sshSecret(vm, keyType); err != nil {
			return nil, status, err
		}
		if keySecret != nil {
			objs = append(objs, keySecret)
		}
	}

	switch {
	case cfgErr != nil:
		// Keep whatever exists, so apply prunes nothing that may own DigitalOcean objects.
		objs = append(objs, h.keepExisting(vm, existing)...)
	default:
		ref := tokenRef(vm, cfg)
		keyRef := vm.Name
		if shared {
			if keyRef, ref, err = h.sharedKeyObjects(vm, cfg); err != nil {
				return nil, status, err
			}
		} else if cfg.Token != "" {
			objs = append(objs, tokenSecret(vm, cfg.Token))
		}
		desired := droplet(vm, cfg, ref, h.opts.InstallationID)
		desired.Spec.KeyRefs = []string{keyRef}
		if existing != nil && (existing.Status.DropletID != 0 || existing.Spec.ClaimedDropletID != 0) {
			// The droplet exists: an edited Environment never touches it.
			desired.Spec = existing.Spec
		}
		if fromPool != nil {
			fromPool.claimed(&desired.Spec, shared)
		}
		if !shared && desired.Spec.ClaimedDropletID == 0 {
			objs = append(objs, key(vm, desired.Spec.TokenSecretRef))
		}
		objs = append(objs, desired)
	}

	labelCost(objs, vm, existing)
	h.reportConfig(vm, existing, cfgErr, settings, keyProblem)
	if err := h.patchVM(vm, secretNameFor(vm, shared), cfg, existing); err != nil {
		log.WithError(err).Warn("updating VM")
		return objs, status, err
	}
	if h.inPlace(vm, objs) || h.awaitingCache(vm, objs) {
		return nil, status, generic.ErrSkip
	}
	return objs, status, nil
}

// keyPairProblem is why the VM's key-pair Secret does not hold the key its
// droplet accepts; it becomes the Droplet's KeyPair=False condition.
type keyPairProblem struct{ reason, message string }

// sshSecret returns the VM's key pair. A pair is made (of type keyType) only
// when there is none and nothing in DigitalOcean depends on the old one: a
// droplet accepts only the key it was created with, and the private key
// exists nowhere but in the Secret. With keyType empty no pair is made.
func (h *handler) sshSecret(vm *hfv1.VirtualMachine, keyType sshkey.Type) (*corev1.Secret, *keyPairProblem, error) {
	name := SSHSecretName(vm)
	existing, err := h.secrets.Cache().Get(vm.Namespace, name)
	if apierrors.IsNotFound(err) {
		// The cache can lag behind a Secret we just made; a regenerated key
		// would no longer match the one registered in DigitalOcean.
		existing, err = h.secrets.Get(vm.Namespace, name, metav1.GetOptions{})
	}
	if err == nil && len(existing.Data[sshkey.PrivateKeyField]) > 0 && h.checkKeyPair(vm, existing) != nil {
		// Applying a stale cached copy would undo a Secret just put right.
		existing, err = h.secrets.Get(vm.Namespace, name, metav1.GetOptions{})
	}
	switch {
	case err == nil && len(existing.Data[sshkey.PrivateKeyField]) > 0:
		kept := sshSecret(vm, existing.Data[sshkey.PrivateKeyField], string(existing.Data[sshkey.PublicKeyField]))
		return kept, h.checkKeyPair(vm, kept), nil
	case err != nil && !apierrors.IsNotFound(err):
		return nil, nil, err
	}
	what := fmt.Sprintf("the SSH key Secret %q was deleted", name)
	var kept *corev1.Secret
	if err == nil {
		// There, but without a private key: keep it as it is rather than let
		// apply prune or overwrite it while the old key is in use.
		what = fmt.Sprintf("the SSH key Secret %q has no %s", name, sshkey.PrivateKeyField)
		kept = sshSecret(vm, nil, "")
		kept.Data = existing.DeepCopy().Data
	}
	inUse, err := h.keyInUse(vm)
	if err != nil {
		return nil, nil, err
	}
	if inUse != "" {
		return kept, &keyPairProblem{reason: "KeySecretLost", message: fmt.Sprintf(
			"%s, but %s; its private key was only in that Secret and cannot be recovered, and a new pair would not log in: "+
				"restore the Secret from a backup, or delete the VM to get a new one", what, inUse)}, nil
	}
	if keyType == "" {
		return kept, nil, nil
	}
	pair, err := sshkey.New(keyType, fmt.Sprintf("hobbyfarm-%s", vm.Name))
	if err != nil {
		return nil, nil, err
	}
	return sshSecret(vm, pair.PrivateKeyPEM, pair.PublicKey), nil, nil
}

// keyInUse says what in DigitalOcean depends on the VM's current key pair,
// or "" when a new pair is safe. It reads the API, not the cache: it runs
// only when the Secret is missing, and a stale answer would break SSH.
func (h *handler) keyInUse(vm *hfv1.VirtualMachine) (string, error) {
	d, err := h.droplets.Get(vm.Namespace, vm.Name, metav1.GetOptions{})
	switch {
	case err != nil && !apierrors.IsNotFound(err):
		return "", err
	case err == nil && ownedBy(d, vm) && d.Status.DropletID != 0:
		return fmt.Sprintf("droplet %d was created with the old key and accepts only that one", d.Status.DropletID), nil
	case err == nil && ownedBy(d, vm) && d.Spec.ClaimedDropletID != 0:
		return fmt.Sprintf("droplet %d, taken from a warm pool, accepts only the key it was created with", d.Spec.ClaimedDropletID), nil
	case err == nil && ownedBy(d, vm) && v1alpha1.MayExistInDigitalOcean(d) && v1alpha1.Created.GetReason(d) != v1alpha1.ReasonWaitingForKey:
		// (A Droplet waiting for its Key has sent no create: creates need the Key's ID.)
		return "a droplet may have been created with the old key", nil
	}
	k, err := h.keys.Get(vm.Namespace, vm.Name, metav1.GetOptions{})
	switch {
	case err != nil && !apierrors.IsNotFound(err):
		return "", err
	case err == nil && ownedBy(k, vm) && (k.Status.KeyID != 0 || k.Status.Fingerprint != ""):
		return fmt.Sprintf("the Key holds the old key %s, which the droplet will be created with", k.Status.Fingerprint), nil
	}
	return "", nil
}

// checkKeyPair reports a Secret whose public key is not the one registered
// in DigitalOcean (restored from the wrong backup, or made by hand).
func (h *handler) checkKeyPair(vm *hfv1.VirtualMachine, secret *corev1.Secret) *keyPairProblem {
	k, err := h.keys.Cache().Get(vm.Namespace, vm.Name)
	if err != nil || !ownedBy(k, vm) || k.Status.Fingerprint == "" {
		return nil
	}
	return keyPairMismatch(secret, k.Status.Fingerprint)
}

// keyPairMismatch reports secret when it does not hold the key with
// fingerprint, which the droplet was created with.
func keyPairMismatch(secret *corev1.Secret, registered string) *keyPairProblem {
	fingerprint, err := sshkey.Fingerprint(string(secret.Data[sshkey.PublicKeyField]))
	if err == nil && fingerprint == registered {
		return nil
	}
	held := "no valid public key"
	if err == nil {
		held = "the key " + fingerprint
	}
	return &keyPairProblem{reason: "KeySecretMismatch", message: fmt.Sprintf(
		"the SSH key Secret %q holds %s, not the key %s the droplet was created with, which it accepts: "+
			"restore the original Secret from a backup, or delete the VM to get a new one", secret.Name, held, registered)}
}

// ownedBy: a Droplet or Key of the same name may be a deleted VM's, still terminating.
func ownedBy(obj metav1.Object, vm *hfv1.VirtualMachine) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID == vm.UID {
			return true
		}
	}
	return false
}

// resolve merges and validates the VM's config as Gargantua would.
func (h *handler) resolve(vm *hfv1.VirtualMachine) (*config.Droplet, map[string]string, error) {
	env, err := h.envs.Get(vm.Namespace, vm.Status.EnvironmentId)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, &config.Error{Key: "status.environment_id", Problem: fmt.Sprintf("Environment %q does not exist in namespace %q", vm.Status.EnvironmentId, vm.Namespace),
				Fix: "create the Environment or point the VM at an existing one"}
		}
		return nil, nil, err
	}
	vmt, err := h.templates.Get(vm.Namespace, vm.Spec.VirtualMachineTemplateId)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, &config.Error{Key: "spec.vm_template_id", Problem: fmt.Sprintf("VirtualMachineTemplate %q does not exist", vm.Spec.VirtualMachineTemplateId),
				Fix: "create the template or fix the VM's vm_template_id"}
		}
		return nil, nil, err
	}
	return ResolveTemplate(env, vmt, h.secrets.Cache())
}

// keepExisting re-emits the objects already made for vm, unchanged.
func (h *handler) keepExisting(vm *hfv1.VirtualMachine, existing *v1alpha1.Droplet) []runtime.Object {
	var objs []runtime.Object
	if existing == nil {
		return append(objs, placeholderDroplet(vm))
	}
	d := placeholderDroplet(vm)
	d.Spec = existing.Spec
	objs = append(objs, d)
	if k, err := h.keys.Cache().Get(vm.Namespace, vm.Name); err == nil {
		kept := key(vm, k.Spec.TokenSecretRef)
		kept.Spec = k.Spec
		objs = append(objs, kept)
	}
	if s, err := h.secrets.Cache().Get(vm.Namespace, TokenSecretName(vm)); err == nil {
		objs = append(objs, tokenSecret(vm, string(s.Data[config.TokenSecretKey])))
	}
	return objs
}

// reportConfig records the config verdict, and any problem with the key
// pair, on the Droplet, where conditions survive (the VM's status schema
// would prune them).
func (h *handler) reportConfig(vm *hfv1.VirtualMachine, d *v1alpha1.Droplet, cfgErr error, settings map[string]string, keyProblem *keyPairProblem) {
	// A droplet that exists never reads the config again: an Environment
	// broken since is no news to its VM (the Environment is told). Only a
	// Configured=False recorded before (by an older version) is put right.
	configDone := d != nil && d.Status.DropletID != 0 && (cfgErr != nil || !v1alpha1.Configured.IsFalse(d))
	validFromStart := cfgErr == nil && (d == nil || v1alpha1.Configured.GetStatus(d) == "")
	if validFromStart {
		// Valid from the start is no news: no Event, and no write either,
		// since the Droplet controller's first status write records it
		// (events.MarkConfigValid). In a flood that saves a request and a
		// pass per VM.
		if d == nil {
			h.warnUnknownKeys(vm, settings)
		}
		if keyProblem == nil {
			return
		}
	}
	if d == nil {
		// The Droplet is being created by this pass; report once it is cached.
		h.vms.EnqueueAfter(vm.Namespace, vm.Name, retrySoon)
		return
	}
	d = d.DeepCopy()
	configChanged := false
	if !validFromStart && !configDone {
		reason, message := v1alpha1.ReasonConfigValid, v1alpha1.MessageConfigValid
		var invalid *config.Error
		switch {
		case errors.As(cfgErr, &invalid):
			reason, message = ReasonInvalidConfig, invalid.Error()
		case cfgErr != nil:
			reason, message = "ConfigUnavailable", cfgErr.Error()
		}
		configChanged = h.transition(d, v1alpha1.Configured, cfgErr == nil, reason, message, vm, d)
		if configChanged && cfgErr == nil {
			h.warnUnknownKeys(vm, settings)
		}
	}
	if !h.reportKeyPair(vm, d, keyProblem) && !configChanged {
		return
	}
	statecolumn.StampDroplet(d)
	if _, err := h.droplets.UpdateStatus(d); err != nil {
		logrus.WithField("vm", vm.Name).WithError(err).Debug("recording config condition; will retry")
		h.vms.EnqueueAfter(vm.Namespace, vm.Name, retrySoon)
	}
}

// warnUnknownKeys records an Event per config key that looks like a typo,
// when a config is first found valid.
func (h *handler) warnUnknownKeys(vm *hfv1.VirtualMachine, settings map[string]string) {
	for typo, known := range config.UnknownKeys(settings) {
		h.recorder.Eventf(vm, corev1.EventTypeWarning, "UnknownConfigKey", "config key %q is not used; did you mean %q?", typo, known)
	}
}

// reportKeyPair sets KeyPair on d when there is a problem, or when one was
// reported and is gone; it reports whether d changed.
func (h *handler) reportKeyPair(vm *hfv1.VirtualMachine, d *v1alpha1.Droplet, p *keyPairProblem) bool {
	log := logrus.WithField("vm", vm.Name)
	switch {
	case p != nil:
		if !h.transition(d, v1alpha1.KeyPair, false, p.reason, p.message, vm, d) {
			return false
		}
		log.WithField("reason", p.reason).Warn(p.message)
		return true
	case v1alpha1.KeyPair.IsFalse(d):
		if !h.transition(d, v1alpha1.KeyPair, true, "Restored", "the SSH key Secret holds the key registered in DigitalOcean", vm, d) {
			return false
		}
		log.Info("SSH key Secret restored")
		return true
	}
	return false
}
