package environment

import (
	"fmt"
	"sort"
	"strings"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// report is what was last reported on one Environment. Events go out only
// when it changes, so a resync repeats none.
type report struct {
	uid        types.UID
	generation int64
	name       string
	// problems are the last pass's, per template before they were merged.
	problems []Problem
	// valid is each template's verdict as the metric shows it.
	valid map[string]bool
	// validReported: the ConfigValid Event went out for the current state.
	validReported bool
	// notAnnotated is the reason last warned about a missing annotation.
	notAnnotated string
	// events are the scheduled events that used the Environment at the
	// last pass: a change to one of them, even one that drops the
	// Environment, re-checks it.
	events map[string]bool
}

// report records v on env: a Warning per problem not reported before, a
// Normal Event when every template becomes valid, and the metric.
func (h *handler) report(key string, env *hfv1.Environment, v *verdict) {
	h.mu.Lock()
	prev := h.reported[key]
	if prev == nil || prev.uid != env.UID {
		prev = &report{valid: map[string]bool{}}
	}
	next := &report{uid: env.UID, generation: env.Generation, name: env.Name, valid: map[string]bool{}, events: map[string]bool{}}
	for _, e := range v.events {
		next.events[e] = true
	}
	current := templates(env)
	for _, t := range current {
		valid, checked := v.valid[t]
		if !checked {
			// Not checked this time: keep the last word on it.
			valid, checked = prev.valid[t]
		}
		if checked {
			next.valid[t] = valid
		}
	}
	next.problems = append(next.problems, v.problems...)
	for _, p := range prev.problems {
		if _, checked := v.valid[p.Template]; !checked && p.Template != "" && foundByDigitalOcean(p) {
			// Still DigitalOcean's last word on a template it could not check now.
			next.problems = append(next.problems, p)
		}
	}
	allValid := len(current) > 0 && len(next.valid) == len(current)
	for _, valid := range next.valid {
		allValid = allValid && valid
	}
	for _, p := range merged(next.problems) {
		allValid = allValid && p.Advisory
	}
	sendValid := allValid && !prev.validReported
	next.validReported = allValid
	h.reported[key] = next
	h.mu.Unlock()

	log := logFor(env)
	reported := ids(prev.problems)
	for _, p := range merged(next.problems) {
		if reported[p.ID()] {
			continue
		}
		log.WithField("reason", p.Reason).Warn(p.Message())
		h.recorder.Event(env, corev1.EventTypeWarning, p.Reason, p.Message())
	}
	if sendValid {
		msg := fmt.Sprintf("the DigitalOcean config of every template (%s) is valid: token accepted, region, size and image offered", strings.Join(current, ", "))
		log.Info(msg)
		h.recorder.Event(env, corev1.EventTypeNormal, ReasonConfigValid, msg)
	}
	for t, valid := range next.valid {
		metrics.SetEnvironmentConfigValid(env.Name, t, valid)
	}
	for t := range prev.valid {
		if _, ok := next.valid[t]; !ok {
			metrics.ForgetEnvironmentTemplate(env.Name, t)
		}
	}
}

func foundByDigitalOcean(p Problem) bool {
	switch p.Reason {
	case ReasonTokenRejected, ReasonNotInCatalog, ReasonNotInRegion:
		return true
	}
	return false
}

// reportNotAnnotated warns once about an Environment that looks meant for
// this provisioner but lacks its annotation, and shows its templates as
// invalid; one that does not look meant for it is no longer ours at all.
func (h *handler) reportNotAnnotated(key string, env *hfv1.Environment) {
	why := meantForDigitalOcean(env)
	h.mu.Lock()
	prev := h.reported[key]
	if prev != nil && prev.uid != env.UID {
		prev = nil
	}
	warn := why != "" && (prev == nil || prev.notAnnotated != why)
	next := &report{uid: env.UID, generation: env.Generation, name: env.Name, notAnnotated: why, valid: map[string]bool{}}
	if why != "" {
		for _, t := range templates(env) {
			next.valid[t] = false
		}
		h.reported[key] = next
	} else {
		delete(h.reported, key)
	}
	h.mu.Unlock()

	if prev != nil {
		for t := range prev.valid {
			if _, ok := next.valid[t]; !ok {
				metrics.ForgetEnvironmentTemplate(prev.name, t)
			}
		}
	}
	for t := range next.valid {
		metrics.SetEnvironmentConfigValid(env.Name, t, false)
	}
	if warn {
		msg := notAnnotatedMessage(env, why)
		logFor(env).WithField("reason", ReasonNotAnnotated).Warn(msg)
		h.recorder.Event(env, corev1.EventTypeWarning, ReasonNotAnnotated, msg)
	}
}

// forget drops a deleted Environment's state and metric series.
func (h *handler) forget(key string) {
	h.mu.Lock()
	prev := h.reported[key]
	delete(h.reported, key)
	h.mu.Unlock()
	if prev == nil {
		return
	}
	for t := range prev.valid {
		metrics.ForgetEnvironmentTemplate(prev.name, t)
	}
}

// merged is problems with those found through several templates once, sorted.
func merged(problems []Problem) []Problem {
	seen := map[string]bool{}
	var out []Problem
	for _, p := range problems {
		if !seen[p.ID()] {
			seen[p.ID()] = true
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID() < out[j].ID() })
	return out
}

func ids(problems []Problem) map[string]bool {
	out := map[string]bool{}
	for _, p := range problems {
		out[p.ID()] = true
	}
	return out
}
