package fakedo

import (
	"net/http"

	"github.com/digitalocean/godo"
)

type wireAccount struct {
	DropletLimit    int    `json:"droplet_limit"`
	FloatingIPLimit int    `json:"floating_ip_limit"`
	ReservedIPLimit int    `json:"reserved_ip_limit"`
	VolumeLimit     int    `json:"volume_limit"`
	Email           string `json:"email"`
	Name            string `json:"name"`
	UUID            string `json:"uuid"`
	EmailVerified   bool   `json:"email_verified"`
	Status          string `json:"status"`
	StatusMessage   string `json:"status_message"`
}

func (s *Server) getAccount(c *call) reply {
	acc := c.acc
	acc.mu.Lock()
	defer acc.mu.Unlock()
	return reply{status: http.StatusOK, body: struct {
		Account wireAccount `json:"account"`
	}{wireAccount{
		DropletLimit: acc.opts.DropletLimit, FloatingIPLimit: 3, ReservedIPLimit: 3, VolumeLimit: 100,
		Email: acc.opts.Email, Name: "Fake Account", UUID: acc.uuid, EmailVerified: true,
		Status: "active",
	}}}
}

func (s *Server) listRegions(c *call) reply {
	items, links, meta := paginate(s, c.r, s.catalog.regions)
	return reply{status: http.StatusOK, body: struct {
		Regions []godo.Region `json:"regions"`
		Links   wireLinks     `json:"links"`
		Meta    wireMeta      `json:"meta"`
	}{items, links, meta}}
}

func (s *Server) listSizes(c *call) reply {
	items, links, meta := paginate(s, c.r, s.catalog.sizes)
	return reply{status: http.StatusOK, body: struct {
		Sizes []godo.Size `json:"sizes"`
		Links wireLinks   `json:"links"`
		Meta  wireMeta    `json:"meta"`
	}{items, links, meta}}
}

// listImages serves GET /v2/images, honouring type=distribution|application
// loosely: every built-in image is a public distribution image.
func (s *Server) listImages(c *call) reply {
	images := s.catalog.images
	if t := c.r.URL.Query().Get("type"); t == "application" {
		images = nil
	}
	items, links, meta := paginate(s, c.r, nonNil(images))
	return reply{status: http.StatusOK, body: struct {
		Images []godo.Image `json:"images"`
		Links  wireLinks    `json:"links"`
		Meta   wireMeta     `json:"meta"`
	}{items, links, meta}}
}

func (s *Server) getImage(c *call) reply {
	im, ok := s.catalog.image(c.r.PathValue("image"))
	if !ok {
		return notFound()
	}
	return reply{status: http.StatusOK, body: struct {
		Image godo.Image `json:"image"`
	}{im}}
}
