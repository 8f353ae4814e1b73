package config

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshkey"
)

// Droplet is the validated configuration for one VM's droplet.
type Droplet struct {
	// Region is one region slug or several, comma-separated, in order of
	// preference (see Regions).
	Region, Image, Size string
	// Token is set when the Environment holds the token in plain text.
	Token string
	// TokenSecret names a Secret in the namespace whose key "token" holds it.
	TokenSecret                                  string
	Backups, IPv6, Monitoring, PrivateNetworking bool
	UserData                                     string
	Tags                                         []string
	VPCUUID                                      string
	SSHUsername                                  string
	// SSHKeyType is the type of the VM's key pair; it only matters when the pair is made.
	SSHKeyType sshkey.Type
	// SSHKeyScope is KeyScopeVM or KeyScopeEnvironment.
	SSHKeyScope string
	// Readiness is what "running" waits for; never sent to DigitalOcean.
	Readiness v1alpha1.Readiness
	// WarmPool is how many ready droplets to keep for the template; 0 is
	// none unless WarmPoolAuto.
	WarmPool int
	// WarmPoolAuto sizes the pool from its arrivals and refill time, up to
	// WarmPoolMax.
	WarmPoolAuto bool
	WarmPoolMax  int
}

// Error is one problem with the configuration: the key at fault and how to fix it.
type Error struct {
	Key     string
	Problem string
	Fix     string
}

func (e *Error) Error() string {
	if e.Fix == "" {
		return fmt.Sprintf("config key %q: %s", e.Key, e.Problem)
	}
	return fmt.Sprintf("config key %q: %s; %s", e.Key, e.Problem, e.Fix)
}

// slug is the shape DigitalOcean gives one kind of slug: lowercase letters
// and digits in runs joined by single separators.
type slug struct {
	key, eg, list string
	max           int
	// separators are the characters allowed between runs, as the Fix names them.
	separators string
	pattern    *regexp.Regexp
}

var (
	// Region slugs: nyc1, sfo3.
	regionSlug = slug{key: KeyRegion, eg: "nyc1", list: "doctl compute region list", max: MaxRegionSlugLen,
		separators: "'-'", pattern: regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)}
	// Size slugs: s-1vcpu-1gb, c-2, so1_5-2vcpu-16gb.
	sizeSlug = slug{key: KeySize, eg: "s-1vcpu-1gb", list: "doctl compute size list", max: MaxSizeSlugLen,
		separators: "'-' and '_'", pattern: regexp.MustCompile(`^[a-z0-9]+([-_][a-z0-9]+)*$`)}
	// Image slugs: ubuntu-22-04-x64 and Marketplace slugs; a numeric image ID
	// (a snapshot or custom image) is accepted too.
	imageSlug = slug{key: KeyImage, eg: "ubuntu-22-04-x64", list: "doctl compute image list --public", max: MaxImageSlugLen,
		separators: "'-', '_' and '.'", pattern: regexp.MustCompile(`^[a-z0-9]+([-_.][a-z0-9]+)*$`)}
)

// check returns a *Error unless v is a slug of this kind.
func (s slug) check(v, where string) error {
	if len(v) <= s.max && s.pattern.MatchString(v) {
		return nil
	}
	problem := fmt.Sprintf("%s is not a DigitalOcean %s slug", shown(v), s.key)
	if len(v) > s.max {
		problem = fmt.Sprintf("%s is longer than any DigitalOcean %s slug (at most %d characters)", shown(v), s.key, s.max)
	}
	fix := fmt.Sprintf("use a slug as `%s` shows it (lowercase letters and digits joined by %s, e.g. %q) in %s", s.list, s.separators, s.eg, where)
	if lower := strings.ToLower(v); lower != v && len(lower) <= s.max && s.pattern.MatchString(lower) {
		fix = fmt.Sprintf("slugs are lowercase: set it to %q in %s", lower, where)
	}
	return &Error{Key: s.key, Problem: problem, Fix: fix}
}

// checkImage accepts an image slug or a numeric image ID.
func checkImage(v, where string) error {
	if !allDigits(v) {
		return imageSlug.check(v, where)
	}
	if _, ok := IsImageID(v); !ok {
		return &Error{Key: KeyImage, Problem: fmt.Sprintf("%s is not a valid DigitalOcean image ID", shown(v)),
			Fix: "use the image's ID as `doctl compute image list` shows it, or an image slug, in " + where}
	}
	return nil
}

func allDigits(v string) bool { return v != "" && strings.Trim(v, "0123456789") == "" }

// shown quotes a value for a message, cut short: a condition is no place for 1 MiB.
func shown(v string) string {
	const max = 40
	if len(v) <= max {
		return strconv.Quote(v)
	}
	return fmt.Sprintf("%q… (%d bytes)", v[:max], len(v))
}

// IsImageID returns the numeric image ID that image names, if it names one
// rather than a slug.
func IsImageID(image string) (int, bool) {
	if !allDigits(image) {
		return 0, false
	}
	id, err := strconv.Atoi(image)
	return id, err == nil && id > 0
}

var (
	tagPattern = regexp.MustCompile(`^[a-zA-Z0-9_\-:]+$`)
	// A VPC UUID as DigitalOcean prints it.
	uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
)

// Parse validates merged settings (see Merge). The first problem found is
// returned; keys are checked in a fixed order so the message is stable.
func Parse(settings map[string]string, where string) (*Droplet, error) {
	d := &Droplet{SSHUsername: DefaultSSHUsername}
	for _, req := range []struct {
		slug  slug
		dst   *string
		check func(v, where string) error
	}{
		{regionSlug, &d.Region, checkRegions},
		{imageSlug, &d.Image, checkImage},
		{sizeSlug, &d.Size, sizeSlug.check},
	} {
		v := strings.TrimSpace(settings[req.slug.key])
		if v == "" {
			return nil, &Error{Key: req.slug.key, Problem: "is missing",
				Fix: fmt.Sprintf("set it to a DigitalOcean %s slug (e.g. %q) in %s", req.slug.key, req.slug.eg, where)}
		}
		if err := req.check(v, where); err != nil {
			return nil, err
		}
		*req.dst = v
	}
	// A list is kept in one spelling: the Droplet's spec and its request
	// hash, which warm pool claims compare, take it as it is.
	d.Region = strings.Join(v1alpha1.SplitList(d.Region), ",")

	d.Token = strings.TrimSpace(settings[KeyToken])
	d.TokenSecret = strings.TrimSpace(settings[KeyTokenSecret])
	switch {
	case d.Token == "" && d.TokenSecret == "":
		return nil, &Error{Key: KeyTokenSecret, Problem: "neither token nor token-secret is set",
			Fix: "set token-secret to the name of a Secret with key 'token' (or token to the API token) in " + where}
	case d.Token != "" && d.TokenSecret != "":
		return nil, &Error{Key: KeyTokenSecret, Problem: "both token and token-secret are set",
			Fix: "keep only one of them (token-secret is preferred)"}
	}

	for _, b := range []struct {
		key string
		dst *bool
	}{
		{KeyBackups, &d.Backups}, {KeyIPv6, &d.IPv6},
		{KeyMonitoring, &d.Monitoring}, {KeyPrivateNetworking, &d.PrivateNetworking},
	} {
		v, err := parseBool(settings, b.key)
		if err != nil {
			return nil, err
		}
		*b.dst = v
	}

	d.UserData = settings[KeyUserData]
	if len(d.UserData) > MaxUserDataBytes {
		return nil, &Error{Key: KeyUserData, Problem: fmt.Sprintf("is %d bytes, over DigitalOcean's limit of %d", len(d.UserData), MaxUserDataBytes),
			Fix: "shorten it, e.g. fetch large files from cloud-init instead of inlining them"}
	}

	tags, err := parseTags(settings[KeyTags])
	if err != nil {
		return nil, err
	}
	d.Tags = tags

	vpc, err := parseVPCs(settings[KeyVPCUUID], d.Regions())
	if err != nil {
		return nil, err
	}
	d.VPCUUID = vpc

	if u := strings.TrimSpace(settings[KeySSHUsername]); u != "" {
		d.SSHUsername = u
	}

	keyType, err := parseKeyType(settings[KeySSHKeyType])
	if err != nil {
		return nil, err
	}
	d.SSHKeyType = keyType
	switch scope := strings.TrimSpace(settings[KeySSHKeyScope]); scope {
	case "", KeyScopeVM:
		d.SSHKeyScope = KeyScopeVM
	case KeyScopeEnvironment:
		d.SSHKeyScope = KeyScopeEnvironment
	default:
		return nil, &Error{Key: KeySSHKeyScope, Problem: fmt.Sprintf("%s is not a key scope", shown(scope)),
			Fix: `set it to "vm" (a key pair per VM, the default) or "environment" (one shared by all VMs of the Environment, which lets droplets be created ten per request)`}
	}
	readiness, err := parseReadiness(settings)
	if err != nil {
		return nil, err
	}
	d.Readiness = readiness
	// The check of a pool member, which has no VM to name a user, logs in
	// as a VM would; part of the request hash, so VMs and pools match.
	d.Readiness.Username = d.SSHUsername
	if err := parseWarmPool(settings, where, d); err != nil {
		return nil, err
	}
	return d, nil
}

func parseKeyType(raw string) (sshkey.Type, error) {
	v := strings.TrimSpace(raw)
	if v == "" {
		return sshkey.Types[0], nil
	}
	names := make([]string, 0, len(sshkey.Types))
	for _, t := range sshkey.Types {
		if v == string(t) {
			return t, nil
		}
		names = append(names, strconv.Quote(string(t)))
	}
	return "", &Error{Key: KeySSHKeyType, Problem: fmt.Sprintf("%s is not a supported SSH key type", shown(v)),
		Fix: fmt.Sprintf("set it to %s (the default is %s; use rsa only for images whose sshd lacks ed25519)", strings.Join(names, " or "), names[0])}
}

func parseBool(settings map[string]string, key string) (bool, error) {
	switch v := strings.TrimSpace(settings[key]); v {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	default:
		return false, &Error{Key: key, Problem: fmt.Sprintf("%q is not a boolean", v),
			Fix: `set it to "true" or "false"`}
	}
}

func parseTags(raw string) ([]string, error) {
	var tags []string
	for _, t := range v1alpha1.SplitList(raw) {
		if len(t) > 255 || !tagPattern.MatchString(t) {
			return nil, &Error{Key: KeyTags, Problem: fmt.Sprintf("tag %q is not a valid DigitalOcean tag", t),
				Fix: "use only letters, digits, '_', '-' and ':' (at most 255 characters), separated by commas"}
		}
		tags = append(tags, t)
	}
	return tags, nil
}
