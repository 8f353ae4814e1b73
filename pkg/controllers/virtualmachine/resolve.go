package virtualmachine

import (
	"fmt"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	corecontrollers "github.com/rancher/wrangler/v3/pkg/generated/controllers/core/v1"
)

// ResolveTemplate merges and validates the config a VM of template vmt in
// env gets, as Gargantua would; the Environment controller checks each
// template of an Environment with it before any VM exists. The returned
// settings are the merged ones (nil when the template has no mapping).
func ResolveTemplate(env *hfv1.Environment, vmt *hfv1.VirtualMachineTemplate, secrets corecontrollers.SecretCache) (*config.Droplet, map[string]string, error) {
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
		if _, err := digitalocean.ReadToken(secrets, env.Namespace, ref); err != nil {
			return nil, settings, &config.Error{Key: config.KeyTokenSecret, Problem: err.Error()}
		}
	}
	return cfg, settings, nil
}
