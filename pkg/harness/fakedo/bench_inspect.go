package fakedo

import "time"

// DropletLife is when one droplet was created, when its boot delay ends (it
// turns active then unless a test pinned its status) and when it was
// deleted, by the server's clock. Deleted is zero while it is live.
type DropletLife struct {
	ID                       int
	Name                     string
	Created, Active, Deleted time.Time
}

// DropletLives returns the account's droplets, live and deleted ones still
// within DeleteLag, ordered by id. It reads no droplet over the wire, so it
// is cheap enough to poll, e.g. to time deletions exactly.
func (s *Server) DropletLives(token string) []DropletLife {
	var out []DropletLife
	s.withAccount(token, func(acc *account) {
		out = make([]DropletLife, 0, len(acc.order))
		for _, id := range acc.order {
			d := acc.droplets[id]
			out = append(out, DropletLife{ID: d.id, Name: d.name, Created: d.createdAt, Active: d.activeAt, Deleted: d.deletedAt})
		}
	})
	return out
}
