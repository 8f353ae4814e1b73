package fakedo

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// call is what a route handler sees: the authenticated account, the request,
// the clock reading for this request and the fault rule for its route.
type call struct {
	acc  *account
	r    *http.Request
	now  time.Time
	rule FaultRule
}

// reply is a handler's answer; the pipeline encodes it so that a "lost
// response" fault can discard it after the write was applied.
type reply struct {
	status int
	body   any // nil: no body
}

type handlerFunc func(c *call) reply

func (s *Server) handle(mux *http.ServeMux, pattern string, h handlerFunc) {
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, pattern, h) })
}

// serve is the pipeline every request goes through: auth, rate limits,
// injected faults, the handler, then (maybe) a dropped response.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, pattern string, h handlerFunc) {
	start := time.Now()
	rec := RequestRecord{Time: s.now(), Method: r.Method, Pattern: pattern, Path: r.URL.Path}
	reqID := newRequestID()
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json; charset=utf-8")
	hdr.Set("X-Request-Id", reqID)

	finish := func(rep reply) {
		rec.Status = rep.status
		rec.Duration = time.Since(start)
		s.records.add(rec)
		writeReply(w, rep, reqID)
	}

	acc := s.authenticate(r)
	if acc == nil {
		finish(unauthorized())
		return
	}
	rec.TokenHash = acc.tokenHash

	dec := acc.limiter.admit(s.now(), pattern == RouteListKeys)
	dec.setHeaders(hdr)
	if !dec.allowed {
		hdr.Set("Retry-After", strconv.Itoa(retryAfterSeconds(dec.retryAfter)))
		finish(tooManyRequests())
		return
	}

	rule, hasRule := s.faults.ruleFor(pattern)
	if hasRule {
		if !sleepCtx(r.Context(), s.faults.latency(rule)) {
			rec.Status = 0 // client went away while we "were slow"
			rec.Duration = time.Since(start)
			s.records.add(rec)
			return
		}
		if now := s.now(); rule.Force429Until.After(now) {
			hdr.Set("ratelimit-remaining", "0")
			hdr.Set("Retry-After", strconv.Itoa(retryAfterSeconds(rule.Force429Until.Sub(now))))
			finish(tooManyRequests())
			return
		}
		if s.faults.chance(rule.ErrorRate) {
			finish(injectedError(rule.errorStatus()))
			return
		}
	}

	if !s.holds.wait(r, pattern, beforeApply) {
		rec.Duration = time.Since(start) // Status 0: the client left while held
		s.records.add(rec)
		return
	}

	rep := h(&call{acc: acc, r: r, now: s.now(), rule: rule})

	// Applied, then unanswered: the client left during a hold, or a fault.
	lost := rep.status < 400 && !s.holds.wait(r, pattern, afterApply)
	if lost || (hasRule && s.faults.chance(rule.DropResponseAfterApply)) {
		rec.Status = rep.status
		rec.Dropped = true
		rec.Duration = time.Since(start)
		s.records.add(rec)
		dropConnection(w)
		return
	}
	finish(rep)
}

func writeReply(w http.ResponseWriter, rep reply, reqID string) {
	if rep.body == nil {
		w.Header().Del("Content-Type")
		w.WriteHeader(rep.status)
		return
	}
	if e, ok := rep.body.(apiError); ok {
		e.RequestID = reqID
		rep.body = e
	}
	b, err := json.Marshal(rep.body)
	if err != nil {
		b, _ = json.Marshal(apiError{ID: "server_error", Message: "fake: encoding response: " + err.Error(), RequestID: reqID})
		rep.status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(rep.status)
	_, _ = w.Write(append(b, '\n'))
}

// dropConnection closes the client connection without any response, the
// way a lost answer looks to a client.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	// Not hijackable (e.g. HTTP/2): abort the handler, which resets the
	// stream without writing a response.
	panic(http.ErrAbortHandler)
}

// retryAfterSeconds rounds up to whole seconds, at least 1, as Retry-After
// is an integer and 0 would invite a hot loop.
func retryAfterSeconds(d time.Duration) int {
	secs := int((d + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	return secs
}

// sleepCtx waits d or until ctx ends; it reports whether the full wait ran.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func newRequestID() string { return newUUID() }

func formatUUID(b [16]byte) string {
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
