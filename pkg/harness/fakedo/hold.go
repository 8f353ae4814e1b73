package fakedo

import (
	"bytes"
	"io"
	"net/http"
	"sync"
)

// A Hold stops every request on one route at one point of the pipeline until
// the test releases it, so the test can act at exactly that point of the
// client's work: kill the client before its write is applied, or after the
// write is applied and before the client hears of it.
//
// A held request whose client goes away is not answered: before apply it is
// recorded with Status 0 and nothing is applied; after apply it is recorded
// as Dropped, like a lost answer.
type Hold struct {
	pattern string
	point   holdPoint
	set     *holdSet

	reachedOnce sync.Once
	reached     chan struct{}
	releaseOnce sync.Once
	released    chan struct{}
}

type holdPoint int

const (
	beforeApply holdPoint = iota
	afterApply
)

// HoldBeforeApply holds requests on route pattern (a Route* constant) after
// authentication, rate limits and faults, before the handler runs.
func (s *Server) HoldBeforeApply(pattern string) *Hold {
	return s.holds.add(pattern, beforeApply)
}

// HoldAfterApply holds requests on route pattern once the handler has
// applied them (a 2xx or 3xx answer), before the answer is sent.
func (s *Server) HoldAfterApply(pattern string) *Hold {
	return s.holds.add(pattern, afterApply)
}

// Reached is closed when the first request reaches the hold.
func (h *Hold) Reached() <-chan struct{} { return h.reached }

// Release removes the hold and lets the requests it holds go on. It is safe
// to call more than once.
func (h *Hold) Release() {
	h.releaseOnce.Do(func() {
		h.set.remove(h)
		close(h.released)
	})
}

type holdSet struct {
	mu    sync.Mutex
	holds []*Hold
}

func (hs *holdSet) add(pattern string, point holdPoint) *Hold {
	h := &Hold{pattern: pattern, point: point, set: hs,
		reached: make(chan struct{}), released: make(chan struct{})}
	hs.mu.Lock()
	hs.holds = append(hs.holds, h)
	hs.mu.Unlock()
	return h
}

func (hs *holdSet) remove(h *Hold) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	for i, x := range hs.holds {
		if x == h {
			hs.holds = append(hs.holds[:i], hs.holds[i+1:]...)
			return
		}
	}
}

// wait blocks r on every hold of its route at point; it reports false if the
// client went away first.
func (hs *holdSet) wait(r *http.Request, pattern string, point holdPoint) bool {
	hs.mu.Lock()
	var matching []*Hold
	for _, h := range hs.holds {
		if h.pattern == pattern && h.point == point {
			matching = append(matching, h)
		}
	}
	hs.mu.Unlock()
	if len(matching) == 0 {
		return true
	}
	// net/http notices a client that went away only once the request body
	// has been read to its end; read it now and hand the handler a copy.
	if body, err := io.ReadAll(io.LimitReader(r.Body, maxBodySize+1)); err == nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	for _, h := range matching {
		h.reachedOnce.Do(func() { close(h.reached) })
		select {
		case <-h.released:
		case <-r.Context().Done():
			return false
		}
	}
	return true
}
