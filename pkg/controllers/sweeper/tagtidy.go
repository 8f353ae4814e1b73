package sweeper

import (
	"context"
	"sync"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/deletepause"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
)

// The tag tidy deletes our tags that nothing carries or needs any more
// (digitalocean.IsTidyTag): a VM's, a multi-create's, a boot bucket's, a
// warm pool's and a batched delete's. DigitalOcean keeps a tag after its
// last droplet is deleted, so without it every VM would leave a tag or two
// in the operator's account for good.
//
// When: only after Droplets were deleted (a tag empties when its last
// droplet goes) or at start (what a crash or an earlier version left), and
// only once no Droplet has been deleted for a delay (deletepause), so that
// the requests never share an event's end with its deletes; a steady stream
// of deletes defers it at most deletepause.MaxDeferDelays delays.
//
// What: a tag DigitalOcean lists with no resource in two listings at least
// a delay apart, that no VM, Droplet or WarmPool of ours needs (tagNeeds)
// and no request under way relies on. Deleting a tag untags whatever
// carries it, so the emptiness comes from DigitalOcean, not from our
// objects, and every request is at the tidy priority: it waits for every
// other request and never fills more than the tidy share of the budget.
type tagTidy struct {
	s              *sweeper
	delay          time.Duration
	bootBucketLife time.Duration

	mu sync.Mutex
	// dirty: a tag of ours may have emptied since a round last found
	// nothing more to do; dirtySince is when that began.
	dirty      bool
	dirtySince time.Time
	// pause tells when a deleting Droplet was last seen.
	pause *deletepause.Pause
	// notBefore holds the next round back (a confirmation not due, no room).
	notBefore time.Time
	tokens    map[string]*tokenTags
	// known are tokens of Droplets deleted since their tags were last
	// tidied, by hash.
	known map[string]string
	wake  chan struct{}
}

// tokenTags is one token's tidy state.
type tokenTags struct {
	// emptySince: tags seen empty and unneeded, from the first listing that
	// showed them so; deleted once a listing a delay later agrees.
	emptySince map[string]time.Time
	// confirmed are tags due for deletion that a round had no room for.
	confirmed []string
	// freeAt is when the first empty tag listed that was still needed
	// may go: a young boot bucket once it can no longer be handed out, a
	// tag in use a delay on (its user releases it).
	freeAt time.Time
}

func newTagTidy(s *sweeper, delay, bootBucketLife time.Duration, pause *deletepause.Pause) *tagTidy {
	return &tagTidy{s: s, delay: delay, bootBucketLife: bootBucketLife, pause: pause,
		// What a crash or an earlier version left is looked for a delay
		// after the start (the pause's own start).
		dirty: true, dirtySince: time.Now(), tokens: map[string]*tokenTags{}, known: map[string]string{}, wake: make(chan struct{}, 1)}
}

// onDroplet notes Droplets being deleted or gone: their tags may empty.
func (t *tagTidy) onDroplet(_ string, d *v1alpha1.Droplet) (*v1alpha1.Droplet, error) {
	if d == nil || d.DeletionTimestamp != nil {
		t.noteDeleted()
	}
	if d != nil && d.DeletionTimestamp != nil {
		// The last Droplet of a token may go with the Environment that named
		// it: keep the token for the rounds its tags still need.
		if token, err := digitalocean.ReadToken(t.s.secrets, t.s.opts.Namespace, d.Spec.TokenSecretRef); err == nil {
			t.mu.Lock()
			t.known[digitalocean.TokenHash(token)] = token
			t.mu.Unlock()
		}
	}
	return d, nil
}

// noteDeleted: a droplet was or is being deleted, so its tags may empty.
func (t *tagTidy) noteDeleted() {
	t.mu.Lock()
	now := time.Now()
	if !t.dirty {
		t.dirty, t.dirtySince = true, now
	}
	t.mu.Unlock()
	// The pause's own Droplet handler notes this delete too, but maybe
	// after the wake below: noted first, a round never goes on a pause
	// that has not seen it (and an orphan sweep's delete has no Droplet).
	t.pause.Note(now)
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// run tidies until ctx ends, starting once the caches are synced.
func (t *tagTidy) run(ctx context.Context, synced <-chan struct{}) {
	select {
	case <-ctx.Done():
		return
	case <-synced:
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		due, wait := t.schedule(time.Now())
		if due {
			t.round(ctx)
			continue
		}
		var fire <-chan time.Time
		if wait > 0 {
			timer.Reset(wait)
			fire = timer.C
		}
		select {
		case <-ctx.Done():
			return
		case <-t.wake:
		case <-fire:
		}
		timer.Stop()
	}
}

// schedule says whether a round is due now, else how long until one may
// be (0: not until a Droplet is deleted).
func (t *tagTidy) schedule(now time.Time) (bool, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.dirty {
		return false, 0
	}
	at := now.Add(t.pause.Wait(now, t.dirtySince, t.delay))
	if t.notBefore.After(at) {
		at = t.notBefore
	}
	if !now.Before(at) {
		return true, 0
	}
	return false, at.Sub(now)
}

// round tidies every token's tags and says when to look again.
func (t *tagTidy) round(ctx context.Context) {
	now := time.Now()
	needs := t.needs()
	next := time.Time{}
	for hash, token := range t.tokensToTidy() {
		client, err := t.s.clients.For(token)
		if err != nil {
			continue
		}
		again := t.tidyToken(ctx, client, hash, needs)
		if again.IsZero() {
			t.forgetToken(hash, now)
		} else if next.IsZero() || again.Before(next) {
			next = again
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.notBefore = next
	if next.IsZero() && !t.pause.Last().After(now) {
		// Nothing left to confirm or delete, and no Droplet deleted since
		// the round began.
		t.dirty = false
	}
}

// tokensToTidy are the installation's tokens and those of Droplets deleted
// since, by hash.
func (t *tagTidy) tokensToTidy() map[string]string {
	tokens := t.s.tokens()
	t.mu.Lock()
	defer t.mu.Unlock()
	for hash, token := range t.known {
		tokens[hash] = token
	}
	return tokens
}

// forgetToken drops a token whose tags are tidy, unless a Droplet of it
// was deleted since the round began.
func (t *tagTidy) forgetToken(hash string, roundBegan time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.pause.Last().After(roundBegan) {
		delete(t.known, hash)
	}
}

func (t *tagTidy) state(hash string) *tokenTags {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.tokens[hash]
	if st == nil {
		st = &tokenTags{emptySince: map[string]time.Time{}}
		t.tokens[hash] = st
	}
	return st
}

// inUse reports a tag a request under way relies on.
func (t *tagTidy) inUse(tag string) bool { return t.s.clients.TagInUse(tag) }
