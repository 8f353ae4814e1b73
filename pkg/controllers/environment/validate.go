package environment

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/digitalocean/godo"
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/virtualmachine"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// verdict is one pass's findings on an Environment.
type verdict struct {
	problems []Problem
	// valid is each template's verdict; a template missing from it could
	// not be checked this time (DigitalOcean unreachable or held back).
	valid map[string]bool
	// recheck is when to look again without a change.
	recheck time.Duration
	// events are the scheduled events not finished that use the Environment.
	events []string
	// sharingToken are the other Environments (namespace/name) on a token
	// whose seats to come this pass changed: their droplet limit check
	// changes too.
	sharingToken []string
}

// templateCheck is what one template's config needs from DigitalOcean.
type templateCheck struct {
	cfg *config.Droplet
	loc locator
	// tokenSource says where the token came from, for the messages.
	tokenSource string
}

func (h *handler) validate(env *hfv1.Environment) (*verdict, error) {
	v := &verdict{valid: map[string]bool{}, recheck: digitalocean.CatalogTTL}
	if len(env.Spec.TemplateMapping) == 0 {
		v.problems = append(v.problems, Problem{Location: "template_mapping", Reason: ReasonNoTemplateKeys,
			Text: "is empty, so no template's VMs can be provisioned; add template_mapping.<template> with at least image and size for each template the Environment serves"})
	}
	byToken := map[string][]templateCheck{}
	// checks are the templates whose config resolved, for the event checks.
	checks := map[string]templateCheck{}
	var missing []string
	for _, t := range templates(env) {
		vmt, err := h.templates.Get(env.Namespace, t)
		if apierrors.IsNotFound(err) {
			// No VM can be made from it yet; check what the Environment says.
			missing = append(missing, t)
			vmt = &hfv1.VirtualMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: t, Namespace: env.Namespace}}
		} else if err != nil {
			return nil, err
		}
		loc := locator{env: env, vmt: vmt}
		cfg, settings, err := virtualmachine.ResolveTemplate(env, vmt, h.secrets)
		v.problems = append(v.problems, loc.unknownKeys(settings)...)
		var cfgErr *config.Error
		switch {
		case errors.As(err, &cfgErr):
			v.problems = append(v.problems, loc.configProblem(cfgErr))
			v.valid[t] = false
			continue
		case err != nil:
			return nil, err
		}
		checks[t] = templateCheck{cfg: cfg, loc: loc}
		token, source, err := h.token(env, cfg, loc)
		if err != nil {
			return nil, err
		}
		byToken[token] = append(byToken[token], templateCheck{cfg: cfg, loc: loc, tokenSource: source})
	}
	uses, err := h.eventUses(env)
	if err != nil {
		return nil, err
	}
	found, err := h.templateProblems(env, missing, uses, checks)
	if err != nil {
		return nil, err
	}
	v.problems = append(v.problems, found...)
	v.problems = append(v.problems, costProblems(uses, checks)...)
	for _, u := range uses {
		v.events = append(v.events, u.event)
	}
	envKey := env.Namespace + "/" + env.Name
	maxAge := digitalocean.AccountTTL
	if h.changed(envKey, env) {
		maxAge = AccountRecheck
	}
	seats, next := h.seatsToCome(env, uses, time.Now())
	if !next.IsZero() {
		v.recheck = min(v.recheck, time.Until(next)+time.Second)
	}
	v.sharingToken = h.headroom.record(envKey, seatsByToken(seats, byToken))
	for token, checks := range byToken {
		if h.checkWithDigitalOcean(v, token, checks, maxAge) {
			h.checkDropletLimit(v, envKey, token, maxAge)
		}
	}
	return v, nil
}

// token reads the template's token and says where it came from, never what it is.
func (h *handler) token(env *hfv1.Environment, cfg *config.Droplet, loc locator) (token, source string, err error) {
	if cfg.Token != "" {
		return cfg.Token, "the plain-text token in " + loc.locate(config.KeyToken), nil
	}
	ref := v1alpha1.SecretKeyRef{Name: cfg.TokenSecret, Key: config.TokenSecretKey}
	token, err = digitalocean.ReadToken(h.secrets, env.Namespace, ref)
	return token, fmt.Sprintf("Secret %q, key %q (%s)", ref.Name, ref.Key, loc.locate(config.KeyTokenSecret)), err
}

// checkWithDigitalOcean checks the templates that share token: the token
// first, then each config against the token's catalog. It reports whether
// DigitalOcean accepted the token.
func (h *handler) checkWithDigitalOcean(v *verdict, token string, checks []templateCheck, maxAge time.Duration) bool {
	log := logFor(checks[0].loc.env).WithField("token_hash", digitalocean.TokenHash(token))
	retryLater := func(err error) {
		f := digitalocean.Classify(err)
		log.WithField("reason", f.Reason).Debugf("cannot check with DigitalOcean now; retrying in %s: %s", f.RetryAfter, f.Message)
		v.recheck = min(v.recheck, max(f.RetryAfter, time.Second))
	}
	if err := h.catalogs.CheckAccount(h.ctx, token, maxAge); err != nil {
		if digitalocean.Classify(err).Reason != "Unauthorized" {
			retryLater(err)
			return false
		}
		for _, c := range checks {
			key := config.KeyTokenSecret
			if c.cfg.Token != "" {
				key = config.KeyToken
			}
			v.problems = append(v.problems, Problem{Template: c.loc.vmt.Name, Location: c.loc.locate(key), Reason: ReasonTokenRejected,
				Text: fmt.Sprintf("DigitalOcean rejected the token from %s (%s): it is revoked, expired or mistyped; "+
					"create a token with read and write scope at https://cloud.digitalocean.com/account/api/tokens and put it there", c.tokenSource, rejection(err))})
			v.valid[c.loc.vmt.Name] = false
		}
		return false
	}
	cat, err := h.catalogs.Get(h.ctx, token)
	if err != nil {
		retryLater(err)
		return true
	}
	if until := time.Until(cat.Fetched.Add(digitalocean.CatalogTTL)); until > 0 {
		// Every Environment of the token comes back just after the
		// refresh and shares it.
		v.recheck = min(v.recheck, until+time.Second)
	}
	for _, c := range checks {
		image, err := h.catalogs.Image(h.ctx, token, c.cfg.Image)
		if err != nil {
			retryLater(err)
			continue
		}
		found := catalogProblems(cat, c.cfg, image, c.loc)
		v.problems = append(v.problems, found...)
		v.valid[c.loc.vmt.Name] = !slices.ContainsFunc(found, func(p Problem) bool { return !p.Advisory })
	}
	return true
}

// rejection is DigitalOcean's answer, e.g. `401 "Unable to authenticate you"`.
func rejection(err error) string {
	var resp *godo.ErrorResponse
	if errors.As(err, &resp) && resp.Response != nil {
		return fmt.Sprintf("GET /v2/account answered %d %s: %q", resp.Response.StatusCode, http.StatusText(resp.Response.StatusCode), resp.Message)
	}
	return err.Error()
}
