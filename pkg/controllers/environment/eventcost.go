package environment

import (
	"fmt"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
)

// LargeEventVMs is how many VMs of one template an event may ask for at
// ssh_key_scope vm before the check says what creating them costs.
const LargeEventVMs = 50

const (
	// keyRequests is what registering a key costs: the key controller
	// creates it (and looks it up only if DigitalOcean has it already).
	keyRequests = 1
	// multiCreateMax is DigitalOcean's limit of droplets per create
	// request; the droplet controller fills it when droplets share a key.
	multiCreateMax = 10
)

// createRequests is the least number of DigitalOcean requests that make n
// VMs' keys and droplets at scope: per VM a key and a create at vm, one
// shared key and a create per multiCreateMax droplets at environment.
func createRequests(n int, scope string) int {
	if scope == config.KeyScopeEnvironment {
		return keyRequests + (n+multiCreateMax-1)/multiCreateMax
	}
	return n * (keyRequests + 1)
}

// minuteLimit is DigitalOcean's shortest per-token limit, the one a burst
// of creates runs into (250 requests a minute).
func minuteLimit() digitalocean.RateLimit {
	shortest := digitalocean.DefaultRateLimits[0]
	for _, l := range digitalocean.DefaultRateLimits[1:] {
		if l.Window < shortest.Window {
			shortest = l
		}
	}
	return shortest
}

// budgetTime is how much of the token's minuteLimit requests take.
func budgetTime(requests int) time.Duration {
	l := minuteLimit()
	return time.Duration(requests) * l.Window / time.Duration(l.Requests)
}

// costProblems warn, once per event and template, about an event asking
// for more than LargeEventVMs VMs of a template whose keys are per VM:
// their creates hold the token's budget many times longer than they would
// under ssh_key_scope environment.
func costProblems(uses []eventUse, checks map[string]templateCheck) []Problem {
	var out []Problem
	for _, u := range uses {
		c, ok := checks[u.template]
		if !ok || u.count <= LargeEventVMs || c.cfg.SSHKeyScope != config.KeyScopeVM {
			continue
		}
		vm, shared := createRequests(u.count, config.KeyScopeVM), createRequests(u.count, config.KeyScopeEnvironment)
		fix := fmt.Sprintf("Set ssh_key_scope: %s in environment_specifics (every template) or template_mapping[%s]", config.KeyScopeEnvironment, u.template)
		if _, set := config.Merge(c.loc.env, c.loc.vmt)[config.KeySSHKeyScope]; set {
			fix = fmt.Sprintf("Set it to %q (ssh_key_scope: %s)", config.KeyScopeEnvironment, config.KeyScopeEnvironment)
		}
		out = append(out, Problem{Template: u.template, Location: c.loc.locate(config.KeySSHKeyScope), Reason: ReasonPerVMKeyCost, Advisory: true,
			id: ReasonPerVMKeyCost + "/" + u.event + "/" + u.template,
			Text: fmt.Sprintf("scheduled event %q asks for %d VMs of template %q, each with a key of its own (ssh_key_scope %s): "+
				"creating them takes at least %d DigitalOcean requests (a key create and a droplet create per VM; each key's delete once its droplet exists waits for spare budget), %s of the token's %d requests a minute; "+
				"with ssh_key_scope: %s (one key for the Environment, up to %d droplets per create) it takes %d requests, %s. %s before the event starts",
				u.event, u.count, u.template, config.KeyScopeVM, vm, shortDuration(budgetTime(vm)), minuteLimit().Requests,
				config.KeyScopeEnvironment, multiCreateMax, shared, shortDuration(budgetTime(shared)), fix)})
	}
	return out
}

// shortDuration reads "2.4 min" or "7.4 s".
func shortDuration(d time.Duration) string {
	if d >= time.Minute {
		return fmt.Sprintf("%.1f min", d.Minutes())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}
