package config

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Droplet is the validated configuration for one VM's droplet.
type Droplet struct {
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
		key string
		dst *string
		eg  string
	}{
		{KeyRegion, &d.Region, "nyc1"},
		{KeyImage, &d.Image, "ubuntu-22-04-x64"},
		{KeySize, &d.Size, "s-1vcpu-1gb"},
	} {
		v := strings.TrimSpace(settings[req.key])
		if v == "" {
			return nil, &Error{Key: req.key, Problem: "is missing",
				Fix: fmt.Sprintf("set it to a DigitalOcean %s slug (e.g. %q) in %s", req.key, req.eg, where)}
		}
		*req.dst = v
	}

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

	d.VPCUUID = strings.TrimSpace(settings[KeyVPCUUID])
	if d.VPCUUID != "" && !uuidPattern.MatchString(d.VPCUUID) {
		return nil, &Error{Key: KeyVPCUUID, Problem: fmt.Sprintf("%q is not a UUID", d.VPCUUID),
			Fix: "use the VPC's id as `doctl vpcs list` shows it, or remove the key"}
	}

	if u := strings.TrimSpace(settings[KeySSHUsername]); u != "" {
		d.SSHUsername = u
	}
	return d, nil
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
	for _, t := range strings.Split(raw, ",") {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		if len(t) > 255 || !tagPattern.MatchString(t) {
			return nil, &Error{Key: KeyTags, Problem: fmt.Sprintf("tag %q is not a valid DigitalOcean tag", t),
				Fix: "use only letters, digits, '_', '-' and ':' (at most 255 characters), separated by commas"}
		}
		tags = append(tags, t)
	}
	return tags, nil
}

// UnknownKeys lists keys that look like typos of known ones, with the likely intent.
func UnknownKeys(settings map[string]string) map[string]string {
	out := map[string]string{}
	for k := range settings {
		if knownKeys[k] {
			continue
		}
		if guess := closestKnown(k); guess != "" {
			out[k] = guess
		}
	}
	return out
}

func closestKnown(key string) string {
	normalized := strings.ToLower(strings.NewReplacer("-", "_", " ", "_").Replace(key))
	candidates := make([]string, 0, len(knownKeys))
	for k := range knownKeys {
		candidates = append(candidates, k)
	}
	sort.Strings(candidates)
	for _, k := range candidates {
		kn := strings.ReplaceAll(k, "-", "_")
		if normalized == kn || editDistance(normalized, kn) <= 2 {
			return k
		}
	}
	return ""
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
