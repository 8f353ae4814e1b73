package environment

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/virtualmachine"
)

// ProvisionerAnnotation names the Environment's provisioner; Gargantua
// copies it to a label of the same key on the VMs it makes.
const ProvisionerAnnotation = virtualmachine.ProvisionerLabel

// ProvisionerName is this provisioner's value of it.
const ProvisionerName = virtualmachine.ProvisionerName

var (
	// DigitalOcean region slugs are three letters and a digit (nyc1, sfo3);
	// other clouds' regions (us-east-1, westeurope) are not.
	doRegion = regexp.MustCompile(`^[a-z]{3}[0-9]$`)
	// DigitalOcean's size slugs name vCPUs like s-1vcpu-1gb or c-2-4gib.
	doSize = regexp.MustCompile(`^[a-z][a-z0-9]*-[0-9]+vcpu-`)
)

// annotated reports whether env is this provisioner's.
func annotated(env *hfv1.Environment) bool {
	return env.Annotations[ProvisionerAnnotation] == ProvisionerName
}

// meantForDigitalOcean says why an Environment without our annotation
// looks meant for this provisioner, or "" when it does not. Only signs no
// other provider would leave count: "region", "size" and "image" are
// common keys, and spec.provider is free text other provisioners read too.
func meantForDigitalOcean(env *hfv1.Environment) string {
	if annotated(env) {
		return ""
	}
	if env.Labels[ProvisionerAnnotation] == ProvisionerName {
		return fmt.Sprintf("it has the label %s=%s instead of the annotation", ProvisionerAnnotation, ProvisionerName)
	}
	for _, layer := range layers(env) {
		if strings.HasPrefix(strings.TrimSpace(layer.settings[config.KeyToken]), "dop_v1_") {
			return fmt.Sprintf("%s.token holds a DigitalOcean token", layer.name)
		}
	}
	for _, layer := range layers(env) {
		// The first of a list (nyc3,sfo3) will do.
		region, _, _ := strings.Cut(layer.settings[config.KeyRegion], ",")
		region = strings.TrimSpace(region)
		if !doRegion.MatchString(region) {
			continue
		}
		for _, other := range layers(env) {
			if size := strings.TrimSpace(other.settings[config.KeySize]); doSize.MatchString(size) {
				return fmt.Sprintf("it sets the DigitalOcean region %q and size %q", region, size)
			}
			if other.settings[config.KeyTokenSecret] != "" {
				return fmt.Sprintf("it sets the DigitalOcean region %q and %s", region, config.KeyTokenSecret)
			}
		}
	}
	return ""
}

type layer struct {
	name     string
	settings map[string]string
}

// layers are environment_specifics, then each template_mapping entry by name.
func layers(env *hfv1.Environment) []layer {
	out := []layer{{"environment_specifics", env.Spec.EnvironmentSpecifics}}
	for _, t := range templates(env) {
		out = append(out, layer{fmt.Sprintf("template_mapping[%s]", t), env.Spec.TemplateMapping[t]})
	}
	return out
}

// templates are the Environment's templates, the keys of template_mapping, sorted.
func templates(env *hfv1.Environment) []string {
	out := make([]string, 0, len(env.Spec.TemplateMapping))
	for t := range env.Spec.TemplateMapping {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// notAnnotatedMessage is the Warning for an Environment meant for us but not annotated.
func notAnnotatedMessage(env *hfv1.Environment, why string) string {
	state := "has no annotation " + ProvisionerAnnotation
	if other := env.Annotations[ProvisionerAnnotation]; other != "" {
		state = fmt.Sprintf("its annotation %s names %q", ProvisionerAnnotation, other)
	}
	return fmt.Sprintf("Environment looks meant for DigitalOcean (%s) but %s, so hf-provisioner-digitalocean provisions none of its VMs; "+
		"add the annotation: kubectl annotate --overwrite environment %s %s=%s", why, state, env.Name, ProvisionerAnnotation, ProvisionerName)
}
