package fakedo

import (
	"slices"
	"time"
)

// DeleteRecord is one droplet delete the fake answered (by ID or by tag),
// with the droplets it named: a test can tell from these how many deletes
// each droplet got, and whether any came after DigitalOcean had confirmed
// one.
type DeleteRecord struct {
	Time    time.Time // server clock when the request arrived
	Pattern string    // RouteDeleteDroplet or RouteDeleteDropletsByTag
	Tag     string    // the tag_name of a delete by tag
	// Deleted are the droplets this request deleted; Gone those it named
	// (by ID, or carrying the tag) that an earlier request had deleted
	// (but a delete by the same tag: reusing a tag names none again).
	Deleted, Gone []int
	Status        int
}

// DeleteRecords returns the account's droplet deletes, oldest first (nil
// for an unknown token).
func (s *Server) DeleteRecords(token string) []DeleteRecord {
	var out []DeleteRecord
	s.withAccount(token, func(acc *account) {
		out = make([]DeleteRecord, len(acc.deletes))
		for i, r := range acc.deletes {
			r.Deleted, r.Gone = slices.Clone(r.Deleted), slices.Clone(r.Gone)
			out[i] = r
		}
	})
	return out
}

// recordDelete notes a delete and what it named. Caller holds acc.mu.
func (acc *account) recordDelete(c *call, pattern, tag string, deleted, gone []int, status int) {
	acc.deletes = append(acc.deletes, DeleteRecord{Time: c.now, Pattern: pattern, Tag: tag, Deleted: deleted, Gone: gone, Status: status})
}

// goneWithTag are the deleted droplets that carried tag. Caller holds acc.mu.
func (acc *account) goneWithTag(tag string) []int {
	var out []int
	for id, tags := range acc.deletedTags {
		if slices.Contains(tags, tag) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}
