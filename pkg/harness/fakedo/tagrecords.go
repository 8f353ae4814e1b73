package fakedo

import (
	"slices"
	"strconv"
	"time"
)

// TagResourcesRecord is one POST /v2/tags/{tag}/resources that named
// droplets, whatever its answer: a test can tell from these which droplets a
// client ever tried to put under a tag (e.g. a one-off delete tag), even
// those DigitalOcean refused or that were deleted since.
type TagResourcesRecord struct {
	Time       time.Time // server clock when the request arrived
	Tag        string
	DropletIDs []int // as named; an ID that is no number is left out
	Gone       []int // those of DropletIDs deleted before this request
	Status     int   // the handler's answer; 204 once applied
}

// TagResourcesRecords returns the account's tag-resources requests, oldest
// first (nil for an unknown token).
func (s *Server) TagResourcesRecords(token string) []TagResourcesRecord {
	var out []TagResourcesRecord
	s.withAccount(token, func(acc *account) {
		out = make([]TagResourcesRecord, len(acc.tagged))
		for i, r := range acc.tagged {
			r.DropletIDs, r.Gone = slices.Clone(r.DropletIDs), slices.Clone(r.Gone)
			out[i] = r
		}
	})
	return out
}

// recordTagResources notes a tag-resources request and its answer. Caller
// holds acc.mu.
func (acc *account) recordTagResources(c *call, tag string, req tagResourcesRequest, status int) {
	r := TagResourcesRecord{Time: c.now, Tag: tag, Status: status}
	for _, res := range req.Resources {
		if id, err := strconv.Atoi(res.ID); err == nil && res.Type == "droplet" {
			r.DropletIDs = append(r.DropletIDs, id)
			if _, gone := acc.deletedTags[id]; gone {
				r.Gone = append(r.Gone, id)
			}
		}
	}
	acc.tagged = append(acc.tagged, r)
}
