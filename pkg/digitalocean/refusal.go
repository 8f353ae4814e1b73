package digitalocean

import (
	"fmt"
	"slices"
	"strings"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// refusedSettings names the setting a refusal concerns by the words of
// DigitalOcean's message, in order: the first setting one of whose words
// the message contains wins ("size is not available in this region" names
// the size, not the region).
var refusedSettings = []struct {
	key   string
	words []string
}{
	{config.KeySize, []string{"size is not available", "invalid size"}},
	{config.KeyImage, []string{"image"}},
	{config.KeyRegion, []string{"region"}},
	{config.KeyUserData, []string{"user_data", "user data"}},
	{config.KeyVPCUUID, []string{"vpc"}},
	{config.KeyTags, []string{"tag"}},
}

// RefusedSetting is the config key a refusal concerns, read from
// DigitalOcean's message; "" when it names none (e.g. the droplet limit).
// Unauthorized is always the token.
func RefusedSetting(f Failure) string {
	if f.Reason == "Unauthorized" {
		return config.KeyTokenSecret
	}
	m := strings.ToLower(f.Message)
	for _, s := range refusedSettings {
		if slices.ContainsFunc(s.words, func(word string) bool { return strings.Contains(m, word) }) {
			return s.key
		}
	}
	return ""
}

// Origin is where a refused request's settings came from.
type Origin struct {
	Environment, Template string
	// TokenSecret is the Secret the token was read from.
	TokenSecret string
}

// OriginOf is where a Droplet's or Key's settings came from, as the VM
// controller noted on it (v1alpha1.EnvironmentAnnotation and
// TemplateAnnotation; a shared Key names its Environment by label), and its
// token Secret.
func OriginOf(obj metav1.Object, tokenSecret string) Origin {
	env := obj.GetAnnotations()[v1alpha1.EnvironmentAnnotation]
	if env == "" {
		env = obj.GetLabels()[v1alpha1.EnvironmentLabel]
	}
	return Origin{Environment: env, Template: obj.GetAnnotations()[v1alpha1.TemplateAnnotation], TokenSecret: tokenSecret}
}

// Describe is what to record of f: for a refusal, which nothing changes
// until someone fixes it, what was refused, where it came from and how to
// fix it (Explain); else DigitalOcean's message.
func (f Failure) Describe(o Origin, value func(key string) string) string {
	if !f.Permanent {
		return f.Message
	}
	return f.Explain(o, value)
}

// Explain says what DigitalOcean refused, where it came from and how to fix
// it, ending with DigitalOcean's own message. value gives a setting's
// value as sent; the token itself is never named, only its Secret.
func (f Failure) Explain(o Origin, value func(key string) string) string {
	where := ""
	if o.Environment != "" {
		where = fmt.Sprintf(" from Environment %q", o.Environment)
		if o.Template != "" {
			where += fmt.Sprintf(" (template %q)", o.Template)
		}
	}
	mapping := "template_mapping"
	if o.Template != "" {
		mapping = "template_mapping[" + o.Template + "]"
	}
	message := strings.TrimSuffix(f.Message, ".")
	switch key := RefusedSetting(f); key {
	case config.KeyTokenSecret:
		return fmt.Sprintf("%s in Secret %q%s: %s. Put a valid token in that Secret, or fix environment_specifics.token-secret (or token).",
			tokenRejected, o.TokenSecret, where, strings.TrimPrefix(message, tokenRejected+": "))
	case "":
		if strings.Contains(strings.ToLower(message), "droplet limit") {
			return fmt.Sprintf("DigitalOcean refused the droplet%s: %s. Delete droplets or ask DigitalOcean to raise the account's droplet limit.", where, message)
		}
		return fmt.Sprintf("DigitalOcean refused the request%s: %s.", where, message)
	default:
		return fmt.Sprintf("DigitalOcean refused %s %q%s: %s. Fix environment_specifics.%s or %s.%s.",
			key, value(key), where, message, key, mapping, key)
	}
}
