package environment

import (
	"context"
	"strings"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	hfcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io/v1"
	corecontrollers "github.com/rancher/wrangler/v3/pkg/generated/controllers/core/v1"
	"github.com/rancher/wrangler/v3/pkg/relatedresource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// watch re-checks an Environment when something its check reads changes.
func (h *handler) watch(ctx context.Context, templates hfcontrollers.VirtualMachineTemplateController,
	events hfcontrollers.ScheduledEventController, secrets corecontrollers.SecretController) {
	envCache := h.envs.Cache()
	envsNaming := func(uses func(env *hfv1.Environment, name string) (bool, error)) relatedresource.Resolver {
		return func(namespace, name string, _ runtime.Object) ([]relatedresource.Key, error) {
			list, err := envCache.List(namespace, labels.Everything())
			if err != nil {
				return nil, err
			}
			var out []relatedresource.Key
			for _, env := range list {
				if !annotated(env) {
					continue
				}
				if ok, err := uses(env, name); err != nil {
					return nil, err
				} else if ok {
					out = append(out, relatedresource.NewKey(env.Namespace, env.Name))
				}
			}
			return out, nil
		}
	}
	relatedresource.Watch(ctx, "environment-from-token-secret", envsNaming(usesTokenSecret), h.envs, secrets)
	relatedresource.Watch(ctx, "environment-from-template", envsNaming(h.usesTemplate), h.envs, templates)
	relatedresource.Watch(ctx, "environment-from-scheduledevent", func(namespace, name string, obj runtime.Object) ([]relatedresource.Key, error) {
		var out []relatedresource.Key
		if e, ok := obj.(*hfv1.ScheduledEvent); ok && e != nil {
			for envName := range e.Spec.RequiredVirtualMachines {
				if env, err := envCache.Get(namespace, envName); err == nil && annotated(env) {
					out = append(out, relatedresource.NewKey(namespace, envName))
				}
			}
		}
		// And those it used at their last check: it may have dropped them,
		// finished or gone.
		return append(out, h.usedBy(namespace, name)...), nil
	}, h.envs, events)
}

func usesTokenSecret(env *hfv1.Environment, secret string) (bool, error) {
	for _, l := range layers(env) {
		if strings.TrimSpace(l.settings[config.KeyTokenSecret]) == secret {
			return true, nil
		}
	}
	return false, nil
}

// usesTemplate: env maps the template, or an event not finished asks env
// for VMs of it.
func (h *handler) usesTemplate(env *hfv1.Environment, template string) (bool, error) {
	if _, ok := env.Spec.TemplateMapping[template]; ok {
		return true, nil
	}
	uses, err := h.eventUses(env)
	for _, u := range uses {
		if u.template == template {
			return true, nil
		}
	}
	return false, err
}

// usedBy are the Environments whose last check found event using them.
func (h *handler) usedBy(namespace, event string) []relatedresource.Key {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []relatedresource.Key
	for key, r := range h.reported {
		if ns, name, _ := strings.Cut(key, "/"); ns == namespace && r.events[event] {
			out = append(out, relatedresource.NewKey(ns, name))
		}
	}
	return out
}
