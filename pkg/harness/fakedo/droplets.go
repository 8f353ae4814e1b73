package fakedo

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

const maxBodySize = 1 << 20

func (s *Server) createDroplets(c *call) reply {
	var req createRequest
	if rep, ok := decodeBody(c.r, &req); !ok {
		return rep
	}
	spec, msg := s.validateCreate(req)
	if msg != "" {
		return unprocessable(msg)
	}
	acc := c.acc
	acc.mu.Lock()
	defer acc.mu.Unlock()
	keyIDs, authorized, bad := acc.resolveKeys(spec.keyRefs)
	if len(bad) > 0 {
		return unprocessable(strings.Join(bad, ", ") + " are invalid key identifiers for Droplet creation.")
	}
	if acc.live+len(spec.names) > acc.opts.DropletLimit {
		return unprocessable(msgDropletLimit)
	}
	if !s.stock.take(spec.region.Slug, spec.size.Slug, len(spec.names)) {
		return unprocessable(msgSizeUnavailable)
	}
	created := s.addDroplets(acc, spec, keyIDs, authorized, c.now)
	wires := make([]wireDroplet, len(created))
	for i, d := range created {
		wires[i] = d.wire()
		s.refresh(d, c.now) // with NoDelay this boots (and starts SSH) right away
	}
	if req.Names == nil {
		return reply{status: http.StatusAccepted, body: struct {
			Droplet wireDroplet `json:"droplet"`
			Links   wireLinks   `json:"links"`
		}{wires[0], wireLinks{Actions: []wireAction{s.newAction("create")}}}}
	}
	return reply{status: http.StatusAccepted, body: struct {
		Droplets []wireDroplet `json:"droplets"`
		Links    wireLinks     `json:"links"`
	}{wires, wireLinks{Actions: []wireAction{s.newAction("multiple_create")}}}}
}

func (s *Server) newAction(rel string) wireAction {
	id := int(s.actionIDs.Add(1))
	return wireAction{ID: id, Rel: rel, HREF: fmt.Sprintf("%sv2/actions/%d", s.URL(), id)}
}

// addDroplets creates one droplet per name. Caller holds acc.mu, has
// validated spec against the account and refreshes the droplets, which
// schedules their boot.
func (s *Server) addDroplets(acc *account, spec dropletSpec, keyIDs []int, authorized map[string]bool, now time.Time) []*droplet {
	acc.purge(now, s.deleteLag())
	boot, guest := s.bootDelay(), s.defaultGuest()
	vpc := spec.vpcUUID
	if vpc == "" {
		vpc = acc.vpcFor(spec.region.Slug)
	}
	out := make([]*droplet, 0, len(spec.names))
	for _, name := range spec.names {
		pub, priv, v6 := s.ips.allocate(spec.ipv6)
		d := &droplet{
			acc: acc, id: int(s.dropletIDs.Add(1)), name: name,
			region: spec.region, size: spec.size, image: spec.image,
			tags: append([]string(nil), spec.tags...), features: spec.features,
			vpcUUID: vpc, userData: spec.userData,
			sshKeyIDs: keyIDs, authorized: authorized,
			createdAt: now, activeAt: now.Add(boot),
			status: statusNew, autoBoot: true,
			publicV4: pub, privateV4: priv, publicV6: v6,
			guest: guest,
		}
		acc.droplets[d.id] = d
		acc.order = append(acc.order, d.id)
		acc.live++
		acc.noteCreated(d)
		out = append(out, d)
	}
	return out
}

func (s *Server) getDroplet(c *call) reply {
	id, err := strconv.Atoi(c.r.PathValue("id"))
	if err != nil {
		return notFound()
	}
	acc := c.acc
	acc.mu.Lock()
	defer acc.mu.Unlock()
	d := acc.droplets[id]
	if d == nil || d.deleted() {
		return notFound()
	}
	if lag := c.rule.NotFoundAfterCreate; lag > 0 && c.now.Before(d.createdAt.Add(lag)) {
		return notFound()
	}
	s.refresh(d, c.now)
	return reply{status: http.StatusOK, body: struct {
		Droplet wireDroplet `json:"droplet"`
	}{d.wire()}}
}

// listDroplets serves GET /v2/droplets with optional tag_name or name.
// Droplets deleted less than DeleteLag ago are still listed, unchanged.
func (s *Server) listDroplets(c *call) reply {
	q := c.r.URL.Query()
	tag, name := q.Get("tag_name"), q.Get("name")
	acc := c.acc
	acc.mu.Lock()
	defer acc.mu.Unlock()
	acc.purge(c.now, s.deleteLag())
	matches := make([]*droplet, 0, len(acc.order))
	for _, id := range acc.order {
		d := acc.droplets[id]
		if (tag == "" || d.hasTag(tag)) && (name == "" || d.name == name) {
			matches = append(matches, d)
		}
	}
	pageItems, links, meta := paginate(s, c.r, matches)
	wires := make([]wireDroplet, len(pageItems))
	for i, d := range pageItems {
		s.refresh(d, c.now)
		wires[i] = d.wire()
	}
	return reply{status: http.StatusOK, body: struct {
		Droplets []wireDroplet `json:"droplets"`
		Links    wireLinks     `json:"links"`
		Meta     wireMeta      `json:"meta"`
	}{wires, links, meta}}
}

func (s *Server) deleteDroplet(c *call) reply {
	id, err := strconv.Atoi(c.r.PathValue("id"))
	if err != nil {
		return notFound()
	}
	acc := c.acc
	acc.mu.Lock()
	defer acc.mu.Unlock()
	d := acc.droplets[id]
	if d == nil || d.deleted() {
		var gone []int
		if _, ok := acc.deletedTags[id]; ok {
			gone = []int{id}
		}
		acc.recordDelete(c, RouteDeleteDroplet, "", nil, gone, http.StatusNotFound)
		return notFound()
	}
	acc.markDeleted(d, c.now)
	acc.recordDelete(c, RouteDeleteDroplet, "", []int{id}, nil, http.StatusNoContent)
	return reply{status: http.StatusNoContent}
}

func (s *Server) deleteDropletsByTag(c *call) reply {
	tag := c.r.URL.Query().Get("tag_name")
	if tag == "" {
		return unprocessable("tag_name is required to delete Droplets by tag.")
	}
	acc := c.acc
	acc.mu.Lock()
	defer acc.mu.Unlock()
	gone := acc.goneWithTag(tag)
	var deleted []int
	for _, id := range acc.order {
		if d := acc.droplets[id]; !d.deleted() && d.hasTag(tag) {
			acc.markDeleted(d, c.now)
			// A later delete by the same tag does not name it again: it
			// went with this one.
			acc.deletedTags[id] = slices.DeleteFunc(acc.deletedTags[id], func(t string) bool { return t == tag })
			deleted = append(deleted, id)
		}
	}
	acc.recordDelete(c, RouteDeleteDropletsByTag, tag, deleted, gone, http.StatusNoContent)
	return reply{status: http.StatusNoContent}
}

// markDeleted makes the droplet gone for GET at once; lists keep showing it
// until purge runs after the delete lag. Caller holds acc.mu.
func (acc *account) markDeleted(d *droplet, now time.Time) {
	d.deletedAt = now
	if acc.deletedTags == nil {
		acc.deletedTags = map[int][]string{}
	}
	acc.deletedTags[d.id] = slices.Clone(d.tags)
	d.halt()
	acc.live--
}

// purge forgets droplets whose delete lag has passed. Caller holds acc.mu.
func (acc *account) purge(now time.Time, lag time.Duration) {
	if acc.live == len(acc.order) {
		return // nothing deleted
	}
	kept := acc.order[:0]
	for _, id := range acc.order {
		d := acc.droplets[id]
		if d.deleted() && !now.Before(d.deletedAt.Add(lag)) {
			delete(acc.droplets, id)
			continue
		}
		kept = append(kept, id)
	}
	acc.order = kept
}

// decodeBody reads a JSON body of at most maxBodySize bytes.
func decodeBody(r *http.Request, v any) (reply, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodySize+1))
	if err != nil {
		return badRequest("Unable to read the request body."), false
	}
	if len(body) > maxBodySize {
		return errReply(http.StatusRequestEntityTooLarge, "request_entity_too_large", "The request body is too large."), false
	}
	if err := json.Unmarshal(body, v); err != nil {
		return badRequest("Unable to parse the request body as JSON."), false
	}
	return reply{}, true
}
