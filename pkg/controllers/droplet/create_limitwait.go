package droplet

import (
	"fmt"
	"sync"
	"time"

	"github.com/digitalocean/godo"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
)

// limitWaits holds, per token (by its client), the Droplets whose create
// DigitalOcean refused for the account's droplet limit, in the order they
// were first refused. A droplet this controller deletes for the token
// makes room for one more: the first waiting is let go and re-queued at
// once, instead of all of them trying again every refused create pause and
// being refused again. The first of the line also tries after the pause,
// for room made elsewhere (a droplet deleted by hand, another
// installation's). It is safe for the handler's workers at once; a nil
// limitWaits lines up nothing.
type limitWaits struct {
	mu      sync.Mutex
	byToken map[*godo.Client][]*limitWait
	// said is the last refusal's figures per token (limitReached), which
	// the members of one refused multi-create share.
	said map[*godo.Client]limitNote
	// enqueue looks at a Droplet again, by object key.
	enqueue func(key string)
}

type limitWait struct {
	key string
	// free: room was made for it; its next pass creates.
	free bool
}

type limitNote struct {
	at   time.Time
	text string
}

// limitNoteAge is how long a refusal's figures serve the next refusals of
// the token: the members of one multi-create, refused together.
const limitNoteAge = time.Second

func newLimitWaits(enqueue func(key string)) *limitWaits {
	return &limitWaits{byToken: map[*godo.Client][]*limitWait{}, said: map[*godo.Client]limitNote{}, enqueue: enqueue}
}

// wait puts key in client's line, where it stays until it goes (done);
// refused again after it was let go, it keeps its place.
func (w *limitWaits) wait(client *godo.Client, key string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.byToken[client] {
		if e.key == key {
			e.free = false
			return
		}
	}
	w.byToken[client] = append(w.byToken[client], &limitWait{key: key})
}

// state says where key stands: waiting in a line, let go (free), first
// in its line.
func (w *limitWaits) state(key string) (waiting, free, first bool) {
	if w == nil {
		return false, false, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, line := range w.byToken {
		for i, e := range line {
			if e.key == key {
				return true, e.free, i == 0
			}
		}
	}
	return false, false, false
}

// done takes key out of every line: created, or going.
func (w *limitWaits) done(key string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for client, line := range w.byToken {
		for i, e := range line {
			if e.key == key {
				line = append(line[:i], line[i+1:]...)
				break
			}
		}
		if len(line) == 0 {
			delete(w.byToken, client)
		} else {
			w.byToken[client] = line
		}
	}
}

// freed lets go as many of client's waiting Droplets as droplets were
// deleted, first refused first.
func (w *limitWaits) freed(client *godo.Client, deleted int) {
	if w == nil {
		return
	}
	w.mu.Lock()
	var keys []string
	for _, e := range w.byToken[client] {
		if len(keys) == deleted {
			break
		}
		if !e.free {
			e.free = true
			keys = append(keys, e.key)
		}
	}
	w.mu.Unlock()
	for _, k := range keys {
		w.enqueue(k)
	}
}

// limitCountAge is how old the account's droplet count a refusal names
// may be: one request a minute per token at most, however many creates
// the limit refuses. A count below the limit, which the refusal of a
// single create contradicts, is read again at once.
const limitCountAge = time.Minute

// limitReached says, for a create refused for the droplet limit, the
// account's limit and the droplets it holds; "" when they cannot be read.
func (h *handler) limitReached(client *godo.Client, d *v1alpha1.Droplet) string {
	if h.opts.Catalogs == nil || h.limits == nil {
		return ""
	}
	h.limits.mu.Lock()
	said, ok := h.limits.said[client]
	h.limits.mu.Unlock()
	if ok && time.Since(said.at) < limitNoteAge {
		return said.text
	}
	text := h.readLimit(d)
	h.limits.mu.Lock()
	h.limits.said[client] = limitNote{at: time.Now(), text: text}
	h.limits.mu.Unlock()
	return text
}

// readLimit reads the figures limitReached says.
func (h *handler) readLimit(d *v1alpha1.Droplet) string {
	token, err := digitalocean.ReadToken(h.secrets, d.Namespace, d.Spec.TokenSecretRef)
	if err != nil {
		return ""
	}
	if h.opts.Catalogs.DropletLimit(token) == 0 {
		// Not read yet (no Environment check since the start): the account
		// check reads it.
		_ = h.opts.Catalogs.CheckAccount(h.ctx, token, 0)
	}
	limit := h.opts.Catalogs.DropletLimit(token)
	held, err := h.opts.Catalogs.DropletsHeld(h.ctx, token, limitCountAge)
	if err == nil && held < limit {
		held, err = h.opts.Catalogs.CountDroplets(h.ctx, token)
	}
	switch {
	case limit == 0 || err != nil:
		return ""
	case held < limit:
		// A multi-create asks for more droplets than are left.
		return fmt.Sprintf(": droplet limit %d, %d held, fewer left than the create asks for", limit, held)
	}
	return fmt.Sprintf(": droplet limit %d reached (%d held)", limit, held)
}
