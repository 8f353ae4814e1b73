package fakedo

import (
	"net/http"
	"slices"
	"strconv"
)

// Tag routes. A tag exists once POST /v2/tags made it or a droplet was
// created or tagged with it, and stays after its last droplet is deleted,
// until DELETE /v2/tags/{tag}, as on DigitalOcean; tagging a resource needs
// the tag to exist first.
const (
	RouteCreateTag    = "POST /v2/tags"
	RouteTagResources = "POST /v2/tags/{tag}/resources"
	RouteListTags     = "GET /v2/tags"
	RouteGetTag       = "GET /v2/tags/{tag}"
	RouteDeleteTag    = "DELETE /v2/tags/{tag}"
)

type wireTag struct {
	Name string `json:"name"`
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
	return acc.tagReply(http.StatusCreated, req.Name)
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
		acc.tags[tag] = d.id
	}
	return reply{status: http.StatusNoContent}
}

// deleteTag serves DELETE /v2/tags/{tag}: DigitalOcean untags every
// resource carrying it and forgets the tag. Deleted droplets keep the tags
// they were deleted with, so their records do not change.
func (s *Server) deleteTag(c *call) reply {
	tag := c.r.PathValue("tag")
	acc := c.acc
	acc.mu.Lock()
	defer acc.mu.Unlock()
	if !acc.tagExists(tag) {
		return notFound()
	}
	for _, d := range acc.droplets {
		if !d.deleted() && d.hasTag(tag) {
			// A copy: replies encode d.tags after the lock is released.
			d.tags = slices.DeleteFunc(slices.Clone(d.tags), func(t string) bool { return t == tag })
		}
	}
	delete(acc.tags, tag)
	return reply{status: http.StatusNoContent}
}

// addTag records a tag made by POST /v2/tags, keeping what an existing one
// knows. Caller holds acc.mu.
func (acc *account) addTag(name string) {
	if _, ok := acc.tags[name]; !ok {
		acc.tags[name] = 0
	}
}

// noteCreated adds a new droplet's tags to the account, the droplet being
// the last tagged with each. Caller holds acc.mu.
func (acc *account) noteCreated(d *droplet) {
	for _, t := range d.tags {
		acc.tags[t] = d.id
	}
}

// tagExists reports whether the account has the tag. Caller holds acc.mu.
func (acc *account) tagExists(name string) bool {
	_, ok := acc.tags[name]
	return ok
}
