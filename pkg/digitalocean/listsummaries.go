package digitalocean

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"github.com/digitalocean/godo"
)

// SummariesPerPage is Droplets.ListSummariesByTag's page size, DigitalOcean's largest.
// A list of more than one page may skip droplets: DigitalOcean pages by
// offset, so a droplet deleted between two page requests moves the ones
// after it a place forward, and the first of the next page lands on the
// page already read.
const SummariesPerPage = 200

// summary is the part of a listed droplet Droplets.ListSummariesByTag
// decodes: ID, name, status, created_at, tags, networks, its region's slug
// and its size's slug and prices (what the resync and the orphan sweep
// read). DigitalOcean's droplet also carries its image, kernel, features,
// its size's regions and its region's sizes: decoded by godo, about 4 KiB
// a droplet and 200 a page, which the lists of every droplet of every
// token allocated over and over.
type summary struct {
	ID       int            `json:"id"`
	Name     string         `json:"name"`
	Status   string         `json:"status"`
	Created  string         `json:"created_at"`
	Tags     []string       `json:"tags"`
	Networks *godo.Networks `json:"networks"`
	Region   *struct {
		Slug string `json:"slug"`
	} `json:"region"`
	Size *struct {
		Slug         string  `json:"slug"`
		PriceMonthly float64 `json:"price_monthly"`
		PriceHourly  float64 `json:"price_hourly"`
	} `json:"size"`
}

func (s *summary) droplet() godo.Droplet {
	d := godo.Droplet{ID: s.ID, Name: s.Name, Status: s.Status, Created: s.Created, Tags: s.Tags, Networks: s.Networks}
	if s.Region != nil {
		d.Region = &godo.Region{Slug: s.Region.Slug}
	}
	if s.Size != nil {
		d.Size = &godo.Size{Slug: s.Size.Slug, PriceMonthly: s.Size.PriceMonthly, PriceHourly: s.Size.PriceHourly}
	}
	return d
}

// pageBuffers hold list pages while they are decoded: a json.Decoder
// would grow a new buffer to each page's size.
var pageBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// summariesPage is one page of godo's Droplets.ListByTag, summaries only.
func summariesPage(ctx context.Context, client *godo.Client, tag string, opt *godo.ListOptions) ([]godo.Droplet, *godo.Response, error) {
	query := url.Values{"tag_name": {tag}, "per_page": {strconv.Itoa(opt.PerPage)}}
	if opt.Page > 0 {
		query.Set("page", strconv.Itoa(opt.Page))
	}
	req, err := client.NewRequest(ctx, http.MethodGet, "v2/droplets?"+query.Encode(), nil)
	if err != nil {
		return nil, nil, err
	}
	body := pageBuffers.Get().(*bytes.Buffer)
	body.Reset()
	defer pageBuffers.Put(body)
	resp, err := client.Do(ctx, req, body)
	if err != nil {
		return nil, resp, err
	}
	var root struct {
		Droplets []summary   `json:"droplets"`
		Links    *godo.Links `json:"links"`
		Meta     *godo.Meta  `json:"meta"`
	}
	if err := json.Unmarshal(body.Bytes(), &root); err != nil {
		return nil, resp, err
	}
	resp.Links, resp.Meta = root.Links, root.Meta
	page := make([]godo.Droplet, len(root.Droplets))
	for i := range root.Droplets {
		page[i] = root.Droplets[i].droplet()
	}
	return page, resp, nil
}
