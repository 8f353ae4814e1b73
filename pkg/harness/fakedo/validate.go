package fakedo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/digitalocean/godo"
)

// DigitalOcean's limits on a droplet create.
const (
	maxMultiCreate  = 10
	maxUserDataSize = 64 * 1024
	maxTagLength    = 255
	maxHostnameLen  = 255
	maxLabelLen     = 63
)

// DigitalOcean's messages (or close to them) for rejected creates.
const (
	msgHostnameChars = "Only valid hostname characters are allowed. (a-z, A-Z, 0-9, . and -)"
	msgBadRegion     = "You specified an invalid region for Droplet creation."
	msgBadSize       = "You specified an invalid size for Droplet creation."
	msgBadImage      = "You specified an invalid image for Droplet creation."
	msgDropletLimit  = "creating this/these droplet(s) will exceed your droplet limit"
)

var tagPattern = regexp.MustCompile(`^[a-zA-Z0-9_\-:]+$`)

// createRequest is the body of POST /v2/droplets, single or multi.
type createRequest struct {
	Name              string            `json:"name"`
	Names             []string          `json:"names"`
	Region            string            `json:"region"`
	Size              string            `json:"size"`
	Image             json.RawMessage   `json:"image"`
	SSHKeys           []json.RawMessage `json:"ssh_keys"`
	Backups           bool              `json:"backups"`
	IPv6              bool              `json:"ipv6"`
	PrivateNetworking bool              `json:"private_networking"`
	Monitoring        bool              `json:"monitoring"`
	UserData          string            `json:"user_data"`
	Tags              []string          `json:"tags"`
	VPCUUID           string            `json:"vpc_uuid"`
}

// dropletSpec is a validated create, minus what depends on account state
// (SSH keys and the droplet limit, checked under the account lock).
type dropletSpec struct {
	names    []string
	region   godo.Region
	size     godo.Size
	image    godo.Image
	keyRefs  []string
	tags     []string
	features []string
	ipv6     bool
	userData string
	vpcUUID  string
}

// validateCreate checks everything but account state; msg is the 422
// message when the request is rejected.
func (s *Server) validateCreate(req createRequest) (spec dropletSpec, msg string) {
	names := req.Names
	if names == nil {
		names = []string{req.Name}
	}
	switch {
	case req.Names != nil && req.Name != "":
		return spec, "Specify either name or names, not both."
	case len(names) == 0:
		return spec, "You must provide at least one name."
	case len(names) > maxMultiCreate:
		return spec, fmt.Sprintf("You may create at most %d Droplets at a time.", maxMultiCreate)
	}
	for _, n := range names {
		if m := hostnameProblem(n); m != "" {
			return spec, m
		}
	}
	region, ok := s.catalog.regionBySlug[req.Region]
	if !ok || !region.Available {
		return spec, msgBadRegion
	}
	size, ok := s.catalog.sizeBySlug[req.Size]
	if !ok || !size.Available {
		return spec, msgBadSize
	}
	if !contains(size.Regions, region.Slug) {
		return spec, "Size is not available in this region."
	}
	image, ok := s.catalog.image(rawIdentifier(req.Image))
	if !ok {
		return spec, msgBadImage
	}
	if len(image.Regions) > 0 && !contains(image.Regions, region.Slug) {
		return spec, "The image you specified is not available in the selected region."
	}
	tags, msg := cleanTags(req.Tags)
	if msg != "" {
		return spec, msg
	}
	if len(req.UserData) > maxUserDataSize {
		return spec, "user_data must not be larger than 64 KiB."
	}
	refs := make([]string, 0, len(req.SSHKeys))
	for _, raw := range req.SSHKeys {
		refs = append(refs, rawIdentifier(raw))
	}
	return dropletSpec{
		names: names, region: region, size: size, image: image, keyRefs: refs,
		tags: tags, features: features(req), ipv6: req.IPv6, userData: req.UserData,
		vpcUUID: req.VPCUUID,
	}, ""
}

// hostnameProblem returns why name is not a valid droplet name, or "".
func hostnameProblem(name string) string {
	if name == "" {
		return "Name can't be blank."
	}
	if len(name) > maxHostnameLen {
		return fmt.Sprintf("Name must be at most %d characters.", maxHostnameLen)
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-'
		if !ok {
			return msgHostnameChars
		}
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" {
			return msgHostnameChars
		}
		if len(label) > maxLabelLen {
			return fmt.Sprintf("Each part of the name between dots must be at most %d characters.", maxLabelLen)
		}
	}
	return ""
}

// cleanTags validates tags and drops duplicates, keeping order.
func cleanTags(tags []string) ([]string, string) {
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		if len(t) > maxTagLength || !tagPattern.MatchString(t) {
			return nil, fmt.Sprintf("tag %q is invalid: tag names must match ^[a-zA-Z0-9_\\-:]+$ and be at most %d characters", t, maxTagLength)
		}
		if !contains(out, t) {
			out = append(out, t)
		}
	}
	return out, ""
}

func features(req createRequest) []string {
	var f []string
	if req.Backups {
		f = append(f, "backups")
	}
	if req.IPv6 {
		f = append(f, "ipv6")
	}
	if req.Monitoring {
		f = append(f, "monitoring")
	}
	if req.PrivateNetworking {
		f = append(f, "private_networking")
	}
	return f
}

// rawIdentifier turns a JSON number or string (image or ssh key reference)
// into its text; anything else becomes its raw JSON, which matches nothing.
func rawIdentifier(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		if i, err := n.Int64(); err == nil {
			return strconv.FormatInt(i, 10)
		}
	}
	return string(raw)
}
