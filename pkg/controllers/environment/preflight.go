package environment

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/virtualmachine"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/warmpool"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// eventUse is what one scheduled event asks of an Environment for one
// template (spec.required_vms[environment][template]).
type eventUse struct {
	event, template string
	count           int
	// start and end are the event's times; timed is false when either
	// does not parse (Gargantua writes time.UnixDate).
	start, end time.Time
	timed      bool
}

// needsVMs: a finished (or deleted) event asks for nothing more. An event
// not started yet counts: the check is meant to come before its start.
func needsVMs(e *hfv1.ScheduledEvent) bool {
	return e.DeletionTimestamp == nil && !e.Status.Finished
}

// eventUses are the asks of env by the namespace's events that are not
// finished, sorted by event and template.
func (h *handler) eventUses(env *hfv1.Environment) ([]eventUse, error) {
	list, err := h.events.List(env.Namespace, labels.Everything())
	if err != nil {
		return nil, err
	}
	var out []eventUse
	for _, e := range list {
		if !needsVMs(e) {
			continue
		}
		start, end, timed := warmpool.EventTimes(e)
		for t, n := range e.Spec.RequiredVirtualMachines[env.Name] {
			out = append(out, eventUse{event: e.Name, template: t, count: n, start: start, end: end, timed: timed})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].event != out[j].event {
			return out[i].event < out[j].event
		}
		return out[i].template < out[j].template
	})
	return out, nil
}

// templateProblems names the template_mapping keys in missing (those with
// no VirtualMachineTemplate) and the templates events use that have no
// template_mapping entry. It adds to checks the config each unmapped
// template would have with an empty entry, for the cost check.
func (h *handler) templateProblems(env *hfv1.Environment, missing []string, uses []eventUse, checks map[string]templateCheck) ([]Problem, error) {
	var out []Problem
	if len(missing) > 0 {
		all, err := h.templates.List(env.Namespace, labels.Everything())
		if err != nil {
			return nil, err
		}
		var unmapped []string
		for _, vmt := range all {
			if _, ok := env.Spec.TemplateMapping[vmt.Name]; !ok {
				unmapped = append(unmapped, vmt.Name)
			}
		}
		for _, t := range missing {
			out = append(out, unknownTemplate(env, t, config.CloseSpellings(t, unmapped)))
		}
	}
	byTemplate := map[string][]eventUse{}
	for _, u := range uses {
		if _, ok := env.Spec.TemplateMapping[u.template]; !ok {
			byTemplate[u.template] = append(byTemplate[u.template], u)
		}
	}
	for t, us := range byTemplate {
		p, check, err := h.unmappedTemplate(env, t, us, config.CloseSpellings(t, missing))
		if err != nil {
			return nil, err
		}
		out = append(out, p)
		if check != nil {
			checks[t] = *check
		}
	}
	return out, nil
}

// unknownTemplate: a template_mapping key that names no template configures
// no VM, while the template meant gets no entry of its own.
func unknownTemplate(env *hfv1.Environment, t string, guesses []string) Problem {
	fix := fmt.Sprintf("create VirtualMachineTemplate %q, or rename the key to the template's name", t)
	if len(guesses) > 0 {
		fix = fmt.Sprintf("did you mean %s? Rename the key to %q", quoteAll(guesses), guesses[0])
	}
	return Problem{Template: t, Location: fmt.Sprintf("template_mapping[%s]", t), Reason: ReasonUnknownTemplate,
		id:   ReasonUnknownTemplate + "/" + t,
		Text: fmt.Sprintf("names no VirtualMachineTemplate in namespace %s, so its settings reach no VM; %s", env.Namespace, fix)}
}

// unmappedTemplate: VMs of a template with no template_mapping entry get
// no droplet from this provisioner, even when environment_specifics and
// the template alone would configure them fully. It says what they would
// get with an empty entry, and returns that config when it is valid.
func (h *handler) unmappedTemplate(env *hfv1.Environment, t string, uses []eventUse, guesses []string) (Problem, *templateCheck, error) {
	vmt, err := h.templates.Get(env.Namespace, t)
	exists := err == nil
	if apierrors.IsNotFound(err) {
		vmt = &hfv1.VirtualMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: t, Namespace: env.Namespace}}
	} else if err != nil {
		return Problem{}, nil, err
	}
	// Resolved as if the entry were there and empty: what adding it gives.
	withEntry := env.DeepCopy()
	withEntry.Spec.TemplateMapping = map[string]map[string]string{t: {}}
	loc := locator{env: withEntry, vmt: vmt}
	cfg, _, err := virtualmachine.ResolveTemplate(withEntry, vmt, h.secrets)
	var cfgErr *config.Error
	if err != nil && !errors.As(err, &cfgErr) {
		return Problem{}, nil, err
	}
	var fix string
	switch {
	case len(guesses) > 0:
		fix = fmt.Sprintf("did you mean template_mapping[%s], which names no VirtualMachineTemplate? Rename that key to %q",
			strings.Join(guesses, "] or template_mapping["), t)
	case cfgErr != nil:
		fix = fmt.Sprintf("add template_mapping[%s] with what environment_specifics and the template leave out (%s: %s", t, loc.locate(cfgErr.Key), cfgErr.Problem)
		if cfgErr.Fix != "" {
			fix += "; " + cfgErr.Fix
		}
		fix += ")"
	default:
		fix = fmt.Sprintf("add template_mapping[%s]: an empty entry is enough, and its VMs get image %q, size %q, region %q from environment_specifics and the template",
			t, cfg.Image, cfg.Size, cfg.Region)
	}
	if !exists {
		fix += fmt.Sprintf("; no VirtualMachineTemplate %q exists either", t)
	}
	events := make([]string, 0, len(uses))
	asks := make([]string, 0, len(uses))
	for _, u := range uses {
		events = append(events, u.event)
		asks = append(asks, fmt.Sprintf("%q (%s)", u.event, vmCount(u.count)))
	}
	who := "scheduled event " + asks[0] + " uses"
	if len(asks) > 1 {
		who = "scheduled events " + strings.Join(asks, ", ") + " use"
	}
	p := Problem{Template: t, Location: fmt.Sprintf("template_mapping[%s]", t), Reason: ReasonTemplateNotMapped,
		// The same events' use of it is one problem, whatever their counts.
		id: ReasonTemplateNotMapped + "/" + t + "/" + strings.Join(events, ","),
		Text: fmt.Sprintf("is missing, but %s template %q; this provisioner makes droplets only for templates in template_mapping, "+
			"so those VMs get none (InvalidConfig, then errorduringprovisioning); %s", who, t, fix)}
	if cfgErr != nil {
		return p, nil, nil
	}
	return p, &templateCheck{cfg: cfg, loc: loc}, nil
}

func quoteAll(names []string) string {
	quoted := make([]string, 0, len(names))
	for _, n := range names {
		quoted = append(quoted, fmt.Sprintf("%q", n))
	}
	return strings.Join(quoted, " or ")
}

func vmCount(n int) string {
	if n == 1 {
		return "1 VM"
	}
	return fmt.Sprintf("%d VMs", n)
}
