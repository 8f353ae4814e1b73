package sweeper

import (
	"context"
	"time"

	"github.com/digitalocean/godo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	"github.com/sirupsen/logrus"
)

// tidyToken deletes one token's confirmed tags, listing the account's tags
// for more when none are left, and says when to look again (zero:
// nothing pending). A delete held back or failed goes on from where it
// stopped once the budget has room or a delay on, without listing again.
func (t *tagTidy) tidyToken(ctx context.Context, client *godo.Client, hash string, needs tagNeeds) time.Time {
	log := logrus.WithField("token_hash", hash)
	st := t.state(hash)
	if len(st.confirmed) == 0 {
		if retry, ok := t.listEmpty(ctx, client, st, needs, log); !ok {
			return retry
		}
	}
	deleted, again := t.deleteConfirmed(ctx, client, st, needs, log)
	if deleted > 0 {
		log.WithField("tags", deleted).Info("deleted empty tags nothing needs any more")
	}
	if !again.IsZero() {
		return again
	}
	return t.nextListing(st)
}

// nextListing is when a listing may confirm more: a delay after the oldest
// tag seen empty, or once a needed tag seen empty may go (zero: nothing
// pending). It may be past: the listing is then due.
func (t *tagTidy) nextListing(st *tokenTags) time.Time {
	next := st.freeAt
	for _, since := range st.emptySince {
		if due := since.Add(t.delay); next.IsZero() || due.Before(next) {
			next = due
		}
	}
	return next
}

// listEmpty lists the account's tags and records ours that have no
// resource and no need: first seen, or confirmed once seen a delay ago.
// Without room or an answer it says when to try again, and false.
func (t *tagTidy) listEmpty(ctx context.Context, client *godo.Client, st *tokenTags, needs tagNeeds, log *logrus.Entry) (time.Time, bool) {
	if wait := t.s.clients.Room(client, digitalocean.PriorityTidy); wait > 0 {
		return time.Now().Add(wait), false
	}
	callCtx, cancel := digitalocean.CallContext(ctx)
	defer cancel()
	tags, err := digitalocean.TagsOf(client).List(callCtx)
	if err != nil {
		log.WithError(err).Warn("tag tidy: listing tags")
		return time.Now().Add(t.delay), false
	}
	now := time.Now()
	installation := digitalocean.InstallationTag(t.s.opts.InstallationID)
	seen := map[string]time.Time{}
	st.freeAt = time.Time{}
	for _, tag := range tags {
		if !digitalocean.IsTidyTag(tag.Name, installation) || !isEmpty(tag) {
			continue
		}
		if needs.has(tag.Name, now) {
			// A boot bucket too young to go, or a tag a request under way
			// uses: look again once it may be free.
			free := needs.freeFrom(tag.Name)
			if needs.inUse(tag.Name) {
				free = now.Add(t.delay)
			}
			if free.After(now) && (st.freeAt.IsZero() || free.Before(st.freeAt)) {
				st.freeAt = free
			}
			continue
		}
		since, ok := st.emptySince[tag.Name]
		switch {
		case !ok:
			seen[tag.Name] = now
		case now.Sub(since) >= t.delay:
			st.confirmed = append(st.confirmed, tag.Name)
		default:
			seen[tag.Name] = since
		}
	}
	// A tag not seen empty again (carried again, or deleted) starts over.
	st.emptySince = seen
	return time.Time{}, true
}

// isEmpty: DigitalOcean counts no resource under the tag.
func isEmpty(tag godo.Tag) bool { return tag.Resources != nil && tag.Resources.Count == 0 }

// deleteConfirmed deletes st's confirmed tags while the budget has room,
// and returns how many went and when to go on (zero: all done).
func (t *tagTidy) deleteConfirmed(ctx context.Context, client *godo.Client, st *tokenTags, needs tagNeeds, log *logrus.Entry) (int, time.Time) {
	deleted := 0
	for len(st.confirmed) > 0 {
		tag := st.confirmed[0]
		if needs.has(tag, time.Now()) {
			st.confirmed = st.confirmed[1:]
			continue
		}
		if wait := t.s.clients.Room(client, digitalocean.PriorityTidy); wait > 0 {
			return deleted, time.Now().Add(wait)
		}
		callCtx, cancel := digitalocean.CallContext(ctx)
		err := digitalocean.TagsOf(client).Delete(callCtx, tag)
		cancel()
		if err != nil {
			if digitalocean.IsHeldBack(err) {
				// The limiter filled between Room and the request: its wait,
				// at least a second, never a round at once.
				return deleted, time.Now().Add(max(digitalocean.Classify(err).RetryAfter, time.Second))
			}
			log.WithError(err).WithField("tag", tag).Warn("tag tidy: deleting an empty tag")
			return deleted, time.Now().Add(t.delay)
		}
		st.confirmed = st.confirmed[1:]
		deleted++
		metrics.TagsDeleted.Inc()
	}
	return deleted, time.Time{}
}
