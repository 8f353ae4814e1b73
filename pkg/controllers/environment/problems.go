package environment

import (
	"fmt"
	"strconv"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
)

// Event reasons on an Environment.
const (
	ReasonConfigValid    = "ConfigValid"
	ReasonInvalidConfig  = "InvalidConfig"
	ReasonUnknownKey     = "UnknownConfigKey"
	ReasonTokenRejected  = "TokenRejected"
	ReasonNotInCatalog   = "NotInCatalog"
	ReasonNotInRegion    = "NotInRegion"
	ReasonNotAnnotated   = "NotAnnotated"
	ReasonNoTemplateKeys = "NoTemplateMapping"
	// ReasonUnknownTemplate: a template_mapping key names no VirtualMachineTemplate.
	ReasonUnknownTemplate = "UnknownTemplate"
	// ReasonTemplateNotMapped: a scheduled event uses a template with no template_mapping entry.
	ReasonTemplateNotMapped = "TemplateNotMapped"
	// ReasonPerVMKeyCost: a large event's VMs would each make their own key and create.
	ReasonPerVMKeyCost = "PerVMKeyCost"
)

// Problem is one thing wrong with an Environment: where (the key as the
// operator wrote it), what and the fix, in Text.
type Problem struct {
	// Template is the template whose config it spoils ("" for the whole Environment).
	Template string
	// Location is the key as written, e.g. template_mapping[ubuntu].size.
	Location string
	Text     string
	Reason   string
	// Advisory problems (a key that looks like a typo) leave the config valid.
	Advisory bool
	// id is the same for the same problem found through several templates,
	// so it is reported once; empty means Message.
	id string
}

// Message is the Event text: the key, the value and the fix.
func (p Problem) Message() string { return p.Location + ": " + p.Text }

// ID identifies the problem across passes and templates.
func (p Problem) ID() string {
	if p.id != "" {
		return p.id
	}
	return p.Message()
}

// locator names where a key of one template's merged config was set, in
// Gargantua's order, the later winning: the template's image, its
// config_map, environment_specifics, template_mapping[template].
type locator struct {
	env *hfv1.Environment
	vmt *hfv1.VirtualMachineTemplate
}

func (l locator) locate(key string) string {
	t := l.vmt.Name
	if _, ok := l.env.Spec.TemplateMapping[t][key]; ok {
		return fmt.Sprintf("template_mapping[%s].%s", t, key)
	}
	if _, ok := l.env.Spec.EnvironmentSpecifics[key]; ok {
		return "environment_specifics." + key
	}
	if _, ok := l.vmt.Spec.ConfigMap[key]; ok {
		return fmt.Sprintf("VirtualMachineTemplate %s config_map.%s", t, key)
	}
	if key == config.KeyImage && l.vmt.Spec.Image != "" {
		return fmt.Sprintf("VirtualMachineTemplate %s image", t)
	}
	// Not set anywhere: where it usually goes.
	if key == config.KeyImage || key == config.KeySize {
		return fmt.Sprintf("template_mapping[%s].%s", t, key)
	}
	return "environment_specifics." + key
}

// configProblem turns pkg/config's verdict into a Problem. The same
// problem with environment_specifics, found through each template, is one.
func (l locator) configProblem(err *config.Error) Problem {
	p := Problem{Template: l.vmt.Name, Location: l.locate(err.Key), Text: err.Problem, Reason: ReasonInvalidConfig}
	p.id = p.Message()
	if err.Fix != "" {
		p.Text += "; " + err.Fix
	}
	return p
}

// unknownKeys reports keys that look like typos of known ones.
func (l locator) unknownKeys(settings map[string]string) []Problem {
	var out []Problem
	for typo, known := range config.UnknownKeys(settings) {
		value := ""
		if known != config.KeyToken {
			// A token's value never goes into an Event.
			value = quoteShort(settings[typo]) + " "
		}
		out = append(out, Problem{Template: l.vmt.Name, Location: l.locate(typo), Reason: ReasonUnknownKey, Advisory: true,
			Text: fmt.Sprintf("%sis set but this provisioner reads no key %q; did you mean %q? Rename the key to %q", value, typo, known, known)})
	}
	return out
}

// quoteShort quotes a value for a message, cut to a readable length.
func quoteShort(v string) string {
	const max = 40
	if len(v) <= max {
		return strconv.Quote(v)
	}
	return strconv.Quote(v[:max]) + "…"
}
