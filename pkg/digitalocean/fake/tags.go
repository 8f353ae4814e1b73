package fake

import (
	"net/http"
	"strconv"
)

// Tag routes. A tag exists once POST /v2/tags made it or a droplet was
// created with it, as on DigitalOcean; tagging a resource needs the tag to
// exist first.
const (
	RouteCreateTag    = "POST /v2/tags"
	RouteTagResources = "POST /v2/tags/{tag}/resources"
)

type wireTag struct {
	Name string `json:"name"`
}

func tagReply(status int, name string) reply {
	return reply{status: status, body: struct {
		Tag wireTag `json:"tag"`
	}{wireTag{Name: name}}}
}

// createTag serves POST /v2/tags. Creating a tag that exists answers 201
// with it, as DigitalOcean does.
func (s *Server) createTag(c *call) reply {
	var req wireTag
	if rep, ok := decodeBody(c.r, &req); !ok {
		return rep
	}
	if _, msg := cleanTags([]string{req.Name}); msg != "" {
		return unprocessable(msg)
	}
	acc := c.acc
	acc.mu.Lock()
	defer acc.mu.Unlock()
	acc.addTag(req.Name)
	return tagReply(http.StatusCreated, req.Name)
}

type tagResourcesRequest struct {
	Resources []struct {
		ID   string `json:"resource_id"`
		Type string `json:"resource_type"`
	} `json:"resources"`
}

// tagResources serves POST /v2/tags/{tag}/resources for droplets: 404 for
// an unknown tag or droplet, 204 once every droplet carries the tag (and
// so lists under it).
func (s *Server) tagResources(c *call) reply {
	tag := c.r.PathValue("tag")
	var req tagResourcesRequest
	if rep, ok := decodeBody(c.r, &req); !ok {
		return rep
	}
	if len(req.Resources) == 0 {
		return unprocessable("resources must not be empty")
	}
	acc := c.acc
	acc.mu.Lock()
	defer acc.mu.Unlock()
	rep := acc.tagResources(tag, req)
	acc.recordTagResources(c, tag, req, rep.status)
	return rep
}

// tagResources applies a tag-resources request. Caller holds acc.mu.
func (acc *account) tagResources(tag string, req tagResourcesRequest) reply {
	if !acc.tagExists(tag) {
		return notFound()
	}
	var targets []*droplet
	for _, r := range req.Resources {
		if r.Type != "droplet" {
			return unprocessable("resource_type " + strconv.Quote(r.Type) + " is not supported by this fake")
		}
		id, err := strconv.Atoi(r.ID)
		d := acc.droplets[id]
		if err != nil || d == nil || d.deleted() {
			return notFound()
		}
		targets = append(targets, d)
	}
	for _, d := range targets {
		if !d.hasTag(tag) {
			d.tags = append(d.tags, tag)
		}
	}
	return reply{status: http.StatusNoContent}
}

// addTag records a tag made by POST /v2/tags. Caller holds acc.mu.
func (acc *account) addTag(name string) {
	if acc.tags == nil {
		acc.tags = map[string]bool{}
	}
	acc.tags[name] = true
}

// tagExists: made by POST /v2/tags or carried by a droplet. Caller holds acc.mu.
func (acc *account) tagExists(name string) bool {
	if acc.tags[name] {
		return true
	}
	for _, d := range acc.droplets {
		if d.hasTag(name) {
			return true
		}
	}
	return false
}
