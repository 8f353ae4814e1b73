// Package environment checks each Environment annotated for this
// provisioner the moment it is saved, before any VM needs it: its merged
// config per template, its token and its region, size and image against
// DigitalOcean's catalog; that its template_mapping names existing
// templates and covers those its scheduled events use; what a large
// event's per-VM keys cost; and whether the token's account has room under
// its droplet limit for the seats its events still need (headroom.go). It
// reports on the Environment with Events and
// the hf_do_environment_config_valid metric, and never writes the
// Environment (Gargantua's).
package environment

import (
	"context"
	"strings"
	"sync"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	hfcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io/v1"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	corecontrollers "github.com/rancher/wrangler/v3/pkg/generated/controllers/core/v1"
	"github.com/sirupsen/logrus"
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
	events    hfcontrollers.ScheduledEventCache
	vms       hfcontrollers.VirtualMachineCache
	pools     provcontrollers.WarmPoolCache
	secrets   corecontrollers.SecretCache
	catalogs  *digitalocean.Catalogs
	recorder  record.EventRecorder
	verdicts  *Verdicts
	// headroom adds up the seats to come per token across Environments.
	headroom *headroom

	mu sync.Mutex
	// reported is what was last reported per Environment, by namespace/name.
	reported map[string]*report
}

// Register wires the handler, and the watches that re-check an Environment
// when its token Secret, one of its templates or a scheduled event using
// it changes. The handler keeps its verdicts in verdicts for the
// VirtualMachine controller.
func Register(ctx context.Context, c *controllers.Set, catalogs *digitalocean.Catalogs, verdicts *Verdicts) {
	envs, templates, events, secrets := c.Environments, c.Templates, c.ScheduledEvents, c.Secrets
	h := &handler{ctx: ctx, envs: envs, templates: templates.Cache(), events: events.Cache(), secrets: secrets.Cache(),
		vms: c.VMs.Cache(), pools: c.WarmPools.Cache(), catalogs: catalogs, recorder: c.Recorder, reported: map[string]*report{},
		verdicts: verdicts, headroom: newHeadroom()}
	envs.OnChange(ctx, HandlerName, h.onChange)
	h.watch(ctx, templates, events, secrets)
}

func (h *handler) onChange(key string, env *hfv1.Environment) (*hfv1.Environment, error) {
	if env == nil || env.DeletionTimestamp != nil {
		h.forget(key)
		h.verdicts.forget(key)
		h.recheck(h.headroom.forget(key))
		return env, nil
	}
	if !annotated(env) {
		h.verdicts.forget(key)
		h.recheck(h.headroom.forget(key))
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
	h.recheck(v.sharingToken)
	return env, nil
}

// recheck checks the Environments keys (namespace/name) again.
func (h *handler) recheck(keys []string) {
	for _, k := range keys {
		if namespace, name, ok := strings.Cut(k, "/"); ok {
			h.envs.Enqueue(namespace, name)
		}
	}
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
