package fakedo

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
)

// dropletURIBase is how DigitalOcean names a tagged droplet in
// last_tagged_uri: its own API host, whatever host the client used.
const dropletURIBase = "https://api.digitalocean.com/v2/droplets/"

// wireTagStats is DigitalOcean's per-type tag statistics; last_tagged_uri
// is left out while nothing of the type was ever tagged, as DigitalOcean
// answers a new tag.
type wireTagStats struct {
	Count         int    `json:"count"`
	LastTaggedURI string `json:"last_tagged_uri,omitempty"`
}

// wireTagResources: the totals, then each type; the fake tags only
// droplets, so the totals are the droplets' and the other types count 0.
type wireTagResources struct {
	wireTagStats
	Droplets        wireTagStats `json:"droplets"`
	Images          wireTagStats `json:"images"`
	Volumes         wireTagStats `json:"volumes"`
	VolumeSnapshots wireTagStats `json:"volume_snapshots"`
	Databases       wireTagStats `json:"databases"`
}

type wireTagObject struct {
	Name      string           `json:"name"`
	Resources wireTagResources `json:"resources"`
}

// listTags serves GET /v2/tags: every tag of the account, by name, with
// DigitalOcean's pagination.
func (s *Server) listTags(c *call) reply {
	acc := c.acc
	acc.mu.Lock()
	defer acc.mu.Unlock()
	names, links, meta := paginate(s, c.r, slices.Sorted(maps.Keys(acc.tags)))
	counts := acc.liveTagCounts()
	wires := make([]wireTagObject, len(names))
	for i, name := range names {
		wires[i] = acc.tagObject(name, counts[name])
	}
	return reply{status: http.StatusOK, body: struct {
		Tags  []wireTagObject `json:"tags"`
		Links wireLinks       `json:"links"`
		Meta  wireMeta        `json:"meta"`
	}{wires, links, meta}}
}

// getTag serves GET /v2/tags/{tag}; 404 for a tag the account lacks.
func (s *Server) getTag(c *call) reply {
	acc := c.acc
	acc.mu.Lock()
	defer acc.mu.Unlock()
	name := c.r.PathValue("tag")
	if !acc.tagExists(name) {
		return notFound()
	}
	return acc.tagReply(http.StatusOK, name)
}

// tagReply answers with one tag under "tag". Caller holds acc.mu.
func (acc *account) tagReply(status int, name string) reply {
	return reply{status: status, body: struct {
		Tag wireTagObject `json:"tag"`
	}{acc.tagObject(name, acc.liveTagCounts()[name])}}
}

// tagObject renders a tag carried by live droplets; the last droplet
// tagged with it may since be deleted, as DigitalOcean keeps naming it.
// Caller holds acc.mu.
func (acc *account) tagObject(name string, live int) wireTagObject {
	stats := wireTagStats{Count: live}
	if id := acc.tags[name]; id != 0 {
		stats.LastTaggedURI = dropletURIBase + strconv.Itoa(id)
	}
	return wireTagObject{Name: name, Resources: wireTagResources{wireTagStats: stats, Droplets: stats}}
}

// liveTagCounts counts, per tag, the live droplets carrying it. Caller
// holds acc.mu.
func (acc *account) liveTagCounts() map[string]int {
	counts := make(map[string]int)
	for _, d := range acc.droplets {
		if d.deleted() {
			continue
		}
		for _, t := range d.tags {
			counts[t]++
		}
	}
	return counts
}

// TagCount is one tag of an account and how many live droplets carry it.
type TagCount struct {
	Name     string
	Droplets int
}

// Tags returns the account's tags, by name, as GET /v2/tags would list
// them (nil for an unknown token). It reads nothing over the wire.
func (s *Server) Tags(token string) []TagCount {
	var out []TagCount
	s.withAccount(token, func(acc *account) {
		counts := acc.liveTagCounts()
		out = make([]TagCount, 0, len(acc.tags))
		for _, name := range slices.Sorted(maps.Keys(acc.tags)) {
			out = append(out, TagCount{Name: name, Droplets: counts[name]})
		}
	})
	return out
}
