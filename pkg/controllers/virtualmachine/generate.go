package virtualmachine

import (
	"errors"
	"fmt"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
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

	keySecret, err := h.sshSecret(vm)
	if err != nil {
		return nil, status, err
	}
	objs := []runtime.Object{keySecret}

	existing, err := h.droplets.Cache().Get(vm.Namespace, vm.Name)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, status, err
	}
	if apierrors.IsNotFound(err) {
		existing = nil
	}

	cfg, settings, cfgErr := h.resolve(vm)
	switch {
	case cfgErr != nil:
		// Keep whatever exists, so apply prunes nothing that may own DigitalOcean objects.
		objs = append(objs, h.keepExisting(vm, existing)...)
	default:
		ref := tokenRef(vm, cfg)
		if cfg.Token != "" {
			objs = append(objs, tokenSecret(vm, cfg.Token))
		}
		desired := droplet(vm, cfg, ref, h.opts.InstallationID)
		if existing != nil && existing.Status.DropletID != 0 {
			// The droplet exists: an edited Environment never touches it.
			desired.Spec = existing.Spec
		}
		objs = append(objs, key(vm, desired.Spec.TokenSecretRef), desired)
	}

	h.reportConfig(vm, existing, cfgErr, settings)
	if err := h.patchVM(vm, keySecret.Name, cfg, existing); err != nil {
		log.WithError(err).Warn("updating VM")
		return objs, status, err
	}
	return objs, status, nil
}

// sshSecret returns the VM's key pair, generating it only if no Secret exists.
func (h *handler) sshSecret(vm *hfv1.VirtualMachine) (*corev1.Secret, error) {
	name := SSHSecretName(vm)
	existing, err := h.secrets.Cache().Get(vm.Namespace, name)
	if apierrors.IsNotFound(err) {
		// The cache can lag behind a Secret we just made; a regenerated key
		// would no longer match the one registered in DigitalOcean.
		existing, err = h.secrets.Get(vm.Namespace, name, metav1.GetOptions{})
	}
	switch {
	case err == nil && len(existing.Data[sshkey.PrivateKeyField]) > 0:
		return sshSecret(vm, existing.Data[sshkey.PrivateKeyField], string(existing.Data[sshkey.PublicKeyField])), nil
	case err != nil && !apierrors.IsNotFound(err):
		return nil, err
	}
	pair, err := sshkey.NewED25519(fmt.Sprintf("hobbyfarm-%s", vm.Name))
	if err != nil {
		return nil, err
	}
	return sshSecret(vm, pair.PrivateKeyPEM, pair.PublicKey), nil
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
	if _, ok := env.Spec.TemplateMapping[vmt.Name]; !ok {
		return nil, nil, &config.Error{Key: "template_mapping." + vmt.Name, Problem: fmt.Sprintf("Environment %q has no template_mapping entry for template %q", env.Name, vmt.Name),
			Fix: "add template_mapping." + vmt.Name + " with at least image and size"}
	}
	settings := config.Merge(env, vmt)
	cfg, err := config.Parse(settings, fmt.Sprintf("Environment %q (environment_specifics or template_mapping.%s)", env.Name, vmt.Name))
	if err != nil {
		return nil, settings, err
	}
	for _, t := range cfg.Tags {
		// DropletTags drops these anyway; say so rather than drop them silently.
		if digitalocean.IsReservedTag(t) {
			return nil, settings, &config.Error{Key: config.KeyTags,
				Problem: fmt.Sprintf("tag %q is reserved: tags starting with %q and %q identify the provisioner's own droplets", t, "hfdo-", digitalocean.TagManaged),
				Fix:     "remove it from tags"}
		}
	}
	if cfg.TokenSecret != "" {
		ref := v1alpha1.SecretKeyRef{Name: cfg.TokenSecret, Key: config.TokenSecretKey}
		if _, err := digitalocean.ReadToken(h.secrets.Cache(), vm.Namespace, ref); err != nil {
			return nil, settings, &config.Error{Key: config.KeyTokenSecret, Problem: err.Error()}
		}
	}
	return cfg, settings, nil
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

// reportConfig records the config verdict on the Droplet, where conditions
// survive (the VM's status schema would prune them).
func (h *handler) reportConfig(vm *hfv1.VirtualMachine, d *v1alpha1.Droplet, cfgErr error, settings map[string]string) {
	if d == nil {
		// The Droplet is being created by this pass; report once it is cached.
		h.vms.EnqueueAfter(vm.Namespace, vm.Name, retrySoon)
		return
	}
	reason, message := "Valid", "DigitalOcean settings are complete and valid"
	var invalid *config.Error
	switch {
	case errors.As(cfgErr, &invalid):
		reason, message = "InvalidConfig", invalid.Error()
	case cfgErr != nil:
		reason, message = "ConfigUnavailable", cfgErr.Error()
	}
	d = d.DeepCopy()
	if !h.transition(d, v1alpha1.Configured, cfgErr == nil, reason, message, vm, d) {
		return
	}
	if cfgErr == nil {
		for typo, known := range config.UnknownKeys(settings) {
			h.recorder.Eventf(vm, corev1.EventTypeWarning, "UnknownConfigKey", "config key %q is not used; did you mean %q?", typo, known)
		}
	}
	if _, err := h.droplets.UpdateStatus(d); err != nil {
		logrus.WithField("vm", vm.Name).WithError(err).Debug("recording config condition; will retry")
		h.vms.EnqueueAfter(vm.Namespace, vm.Name, retrySoon)
	}
}
