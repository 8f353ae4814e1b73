package warmpool

import (
	"errors"
	"maps"
	"slices"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/tokensecret"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/virtualmachine"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// onEnvironment makes a WarmPool for each template of env whose merged
// config asks for one, brings changed ones up to date, and deletes those
// no longer asked for (their members drain through the garbage collector
// and the Droplet cleanup).
func (h *handler) onEnvironment(_ string, env *hfv1.Environment) (*hfv1.Environment, error) {
	if env == nil || env.DeletionTimestamp != nil {
		return env, nil
	}
	existing, err := h.pools.Cache().List(env.Namespace, labels.SelectorFromSet(labels.Set{v1alpha1.EnvironmentLabel: env.Name}))
	if err != nil {
		return env, err
	}
	keep := map[string]bool{}
	var errs []error
	if env.Annotations[virtualmachine.ProvisionerLabel] == virtualmachine.ProvisionerName {
		for _, template := range slices.Sorted(maps.Keys(env.Spec.TemplateMapping)) {
			name, err := h.ensurePool(env, template)
			if name != "" {
				keep[name] = true
			}
			errs = append(errs, err)
		}
	}
	for _, pool := range existing {
		if keep[pool.Name] || pool.DeletionTimestamp != nil || !isControlledBy(pool, string(env.UID)) {
			continue
		}
		logrus.WithField("environment", env.Name).WithField("pool", pool.Name).Info("warm_pool is 0 or the template is gone: deleting the warm pool")
		if err := h.pools.Delete(pool.Namespace, pool.Name, nil); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return env, errors.Join(errs...)
}

// ensurePool makes or updates the pool of env's template and returns its
// name, or "" when the template wants none. A config that does not resolve
// leaves an existing pool as it is: the Environment controller reports the
// problem, and a token Secret missing for a moment must not drain a pool.
func (h *handler) ensurePool(env *hfv1.Environment, template string) (string, error) {
	log := logrus.WithField("environment", env.Name).WithField("template", template)
	name := PoolName(env.Name, template)
	vmt, err := h.templates.Get(env.Namespace, template)
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return name, err
	}
	cfg, _, err := virtualmachine.ResolveTemplate(env, vmt, h.secrets.Cache())
	if err != nil {
		log.WithError(err).Debug("config does not resolve: warm pool left as it is")
		return name, nil
	}
	if cfg.WarmPool == 0 && !cfg.WarmPoolAuto {
		return "", nil
	}
	desired, err := h.desiredPool(env, template, cfg)
	if err != nil {
		return name, err
	}
	pool, err := h.pools.Cache().Get(env.Namespace, name)
	switch {
	case apierrors.IsNotFound(err):
		log.WithField("pool", name).WithField("size", cfg.WarmPool).WithField("auto", cfg.WarmPoolAuto).Info("creating the warm pool")
		pool, err = h.pools.Create(desired)
	case err != nil:
	case pool.DeletionTimestamp != nil || !isControlledBy(pool, string(env.UID)):
		// A pool of an earlier Environment of this name: wait for it to go.
		h.envs.EnqueueAfter(env.Namespace, env.Name, retryAfter)
		return name, nil
	case !equality.Semantic.DeepEqual(pool.Spec, desired.Spec) || pool.Annotations[keyTypeAnnotation] != desired.Annotations[keyTypeAnnotation]:
		log.WithField("pool", name).WithField("requestHash", desired.Spec.RequestHash).Info("updating the warm pool: members of another request are replaced")
		updated := pool.DeepCopy()
		updated.Spec = desired.Spec
		if updated.Annotations == nil {
			updated.Annotations = map[string]string{}
		}
		maps.Copy(updated.Annotations, desired.Annotations)
		pool, err = h.pools.Update(updated)
	}
	if err != nil {
		return name, err
	}
	if cfg.Token != "" && cfg.SSHKeyScope != config.KeyScopeEnvironment {
		return name, h.ensurePoolToken(pool, cfg.Token)
	}
	return name, nil
}

// desiredPool is the pool of env's template: its members' request is what
// the VM controller's own builder makes for a VM of the template.
func (h *handler) desiredPool(env *hfv1.Environment, template string, cfg *config.Droplet) (*v1alpha1.WarmPool, error) {
	name := PoolName(env.Name, template)
	spec := virtualmachine.DropletRequest(cfg)
	spec.Tags = slices.Clone(cfg.Tags)
	keyScope := config.KeyScopeVM
	spec.TokenSecretRef = v1alpha1.SecretKeyRef{Name: cfg.TokenSecret, Key: config.TokenSecretKey}
	if cfg.Token != "" {
		spec.TokenSecretRef.Name = poolTokenSecretName(name)
	}
	if cfg.SSHKeyScope == config.KeyScopeEnvironment {
		keyName, token, err := virtualmachine.EnsureSharedKey(h.secrets, h.keys, env, cfg)
		if err != nil {
			return nil, err
		}
		spec.KeyRefs, spec.TokenSecretRef, keyScope = []string{keyName}, token, keyName
	}
	token := cfg.Token
	if token == "" {
		var err error
		if token, err = digitalocean.ReadToken(h.secrets.Cache(), env.Namespace, spec.TokenSecretRef); err != nil {
			return nil, err
		}
	}
	pool := &v1alpha1.WarmPool{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   env.Namespace,
			Labels:      map[string]string{v1alpha1.EnvironmentLabel: env.Name},
			Annotations: map[string]string{keyTypeAnnotation: string(cfg.SSHKeyType)},
		},
		Spec: v1alpha1.WarmPoolSpec{
			Environment: env.Name,
			Template:    template,
			WarmPool:    cfg.WarmPool,
			Droplet:     spec,
			Auto:        cfg.WarmPoolAuto,
			Max:         autoMax(cfg),
			RequestHash: digitalocean.RequestHash(spec, keyScope, digitalocean.TokenHash(token)),
		},
	}
	ownedByEnvironment(&pool.ObjectMeta, env)
	return pool, nil
}

// autoMax is the pool's bound when auto-sized: warm_pool_max means nothing
// to a fixed pool, so changing it does not touch one.
func autoMax(cfg *config.Droplet) int {
	if !cfg.WarmPoolAuto {
		return 0
	}
	return cfg.WarmPoolMax
}

// ensurePoolToken keeps the pool's copy of a plain-text token, owned by
// the pool and held by the token-in-use finalizer while members use it.
func (h *handler) ensurePoolToken(pool *v1alpha1.WarmPool, token string) error {
	name := poolTokenSecretName(pool.Name)
	existing, err := h.secrets.Cache().Get(pool.Namespace, name)
	switch {
	case apierrors.IsNotFound(err):
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: pool.Namespace,
			Labels: map[string]string{v1alpha1.WarmPoolLabel: pool.Name}},
			Type: corev1.SecretTypeOpaque, Data: map[string][]byte{config.TokenSecretKey: []byte(token)}}
		ownedByPool(&secret.ObjectMeta, pool)
		_, err = h.secrets.Create(tokensecret.WithFinalizer(secret))
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	case err != nil:
		return err
	case string(existing.Data[config.TokenSecretKey]) != token:
		updated := existing.DeepCopy()
		updated.Data = map[string][]byte{config.TokenSecretKey: []byte(token)}
		_, err = h.secrets.Update(updated)
		return err
	}
	return nil
}
