package fakedo

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RequestRecord is one request as the fake saw it. It never holds the token.
type RequestRecord struct {
	Time      time.Time // server clock when the request arrived
	Method    string
	Pattern   string // route pattern, e.g. "POST /v2/droplets"; "<METHOD> <unmatched>" for unknown paths
	Path      string // the request's path, e.g. "/v2/droplets/42": which droplet, key or tag it names
	TokenHash string // TokenHash of the bearer token; empty when unauthenticated
	Status    int    // status sent (or that would have been sent, if Dropped); 0 if the client left
	Dropped   bool   // the write was applied but the connection was closed unanswered
	Duration  time.Duration
}

// CountKey is the RequestCounts key of r: "<pattern> <status>", or
// "<pattern> dropped" for a dropped response, e.g. "POST /v2/droplets 202".
func (r RequestRecord) CountKey() string {
	if r.Dropped {
		return r.Pattern + " dropped"
	}
	return r.Pattern + " " + strconv.Itoa(r.Status)
}

// requestLog keeps the last max records in a ring and exact counts.
type requestLog struct {
	mu     sync.Mutex
	max    int
	buf    []RequestRecord // grows to max, then is used as a ring
	next   int             // ring position of the oldest record once full
	counts map[string]int
}

func (l *requestLog) init(max int) {
	l.max = max
	l.buf = make([]RequestRecord, 0, min(max, 1024))
	l.next = 0
	l.counts = make(map[string]int)
}

func (l *requestLog) add(r RequestRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.counts[r.CountKey()]++
	if len(l.buf) < l.max {
		l.buf = append(l.buf, r)
		return
	}
	l.buf[l.next] = r
	l.next = (l.next + 1) % len(l.buf)
}

// Requests returns the recorded requests, oldest first.
func (s *Server) Requests() []RequestRecord {
	l := &s.records
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]RequestRecord, 0, len(l.buf))
	out = append(out, l.buf[l.next:]...)
	return append(out, l.buf[:l.next]...)
}

// RequestCounts returns request counts by RequestRecord.CountKey, e.g.
// "POST /v2/droplets 202", "GET /v2/droplets/{id} 404",
// "POST /v2/droplets dropped".
func (s *Server) RequestCounts() map[string]int {
	l := &s.records
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]int, len(l.counts))
	for k, v := range l.counts {
		out[k] = v
	}
	return out
}

// ResetRequests clears the request log and counts.
func (s *Server) ResetRequests() {
	l := &s.records
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init(s.opts.MaxRequestRecords)
}

// RouteRequests counts the requests to route (a Route* constant) the fake has
// answered: every one, or with outcomes only those answered so ("422",
// "dropped"; the last word of a CountKey).
func (s *Server) RouteRequests(route string, outcomes ...string) int {
	n := 0
	for key, count := range s.RequestCounts() {
		outcome, isRoute := strings.CutPrefix(key, route+" ")
		if isRoute && (len(outcomes) == 0 || slices.Contains(outcomes, outcome)) {
			n += count
		}
	}
	return n
}
