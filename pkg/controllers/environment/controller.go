// Package environment checks each Environment annotated for this
// provisioner the moment it is saved, before any VM needs it: its merged
// config per template, its token and its region, size and image against
// DigitalOcean's catalog. It reports on the Environment with Events and
// the hf_do_environment_config_valid metric, and never writes the
// Environment (Gargantua's).
package environment

import (
	"context"
	"strings"
	"sync"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	hfcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io/v1"
	corecontrollers "github.com/rancher/wrangler/v3/pkg/generated/controllers/core/v1"
	"github.com/rancher/wrangler/v3/pkg/relatedresource"
	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

// HandlerName is part of the API: never rename it.
const HandlerName = "hf-provisioner-digitalocean-environment"

// AccountRecheck is how old a token's account check may be when its
// Environment changes: a burst of edits costs one request.
const AccountRecheck = time.Minute

type handler struct {
	ctx       context.Context
	envs      hfcontrollers.EnvironmentController
	templates hfcontrollers.VirtualMachineTemplateCache
	secrets   corecontrollers.SecretCache
	catalogs  *digitalocean.Catalogs
	recorder  record.EventRecorder
	verdicts  *Verdicts

	mu sync.Mutex
	// reported is what was last reported per Environment, by namespace/name.
	reported map[string]*report
}

// Register wires the handler, and the watches that re-check an Environment
// when its token Secret or one of its templates changes. The handler keeps
// its verdicts in verdicts for the VirtualMachine controller.
func Register(ctx context.Context, envs hfcontrollers.EnvironmentController,
	templates hfcontrollers.VirtualMachineTemplateController, secrets corecontrollers.SecretController,
	catalogs *digitalocean.Catalogs, recorder record.EventRecorder, verdicts *Verdicts) {
	h := &handler{ctx: ctx, envs: envs, templates: templates.Cache(), secrets: secrets.Cache(),
		catalogs: catalogs, recorder: recorder, reported: map[string]*report{}, verdicts: verdicts}
	envs.OnChange(ctx, HandlerName, h.onChange)

	envCache := envs.Cache()
	envsNaming := func(uses func(env *hfv1.Environment, name string) bool) relatedresource.Resolver {
		return func(namespace, name string, _ runtime.Object) ([]relatedresource.Key, error) {
			list, err := envCache.List(namespace, labels.Everything())
			if err != nil {
				return nil, err
			}
			var out []relatedresource.Key
			for _, env := range list {
				if annotated(env) && uses(env, name) {
					out = append(out, relatedresource.NewKey(env.Namespace, env.Name))
				}
			}
			return out, nil
		}
	}
	relatedresource.Watch(ctx, "environment-from-token-secret", envsNaming(usesTokenSecret), envs, secrets)
	relatedresource.Watch(ctx, "environment-from-template", envsNaming(func(env *hfv1.Environment, name string) bool {
		_, ok := env.Spec.TemplateMapping[name]
		return ok
	}), envs, templates)
}

func usesTokenSecret(env *hfv1.Environment, secret string) bool {
	for _, l := range layers(env) {
		if strings.TrimSpace(l.settings[config.KeyTokenSecret]) == secret {
			return true
		}
	}
	return false
}

func (h *handler) onChange(key string, env *hfv1.Environment) (*hfv1.Environment, error) {
	if env == nil || env.DeletionTimestamp != nil {
		h.forget(key)
		h.verdicts.forget(key)
		return env, nil
	}
	if !annotated(env) {
		h.verdicts.forget(key)
		h.reportNotAnnotated(key, env)
		return env, nil
	}
	v, err := h.validate(env)
	if err != nil {
		return env, err
	}
	h.recordVerdict(key, env, v)
	h.report(key, env, v)
	h.envs.EnqueueAfter(env.Namespace, env.Name, v.recheck)
	return env, nil
}

// changed reports whether env's spec differs from the one last checked
// (or was never checked by this process).
func (h *handler) changed(key string, env *hfv1.Environment) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.reported[key]
	return r == nil || r.uid != env.UID || r.generation != env.Generation
}

func logFor(env *hfv1.Environment) *logrus.Entry {
	return logrus.WithField("environment", env.Name)
}
