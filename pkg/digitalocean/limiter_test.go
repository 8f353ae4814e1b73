package digitalocean

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// fill sends requests of priority p that finish at once until the limiter
// refuses one, and returns how many it let through.
func fill(l *limiter, p Priority, now time.Time) int {
	n := 0
	for {
		finish, _ := l.reserve(p, now)
		if finish == nil {
			return n
		}
		finish(now)
		n++
	}
}

func TestLimiterKeepsRoomForHigherPriorities(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newLimiter(LimiterOptions{Limits: []RateLimit{{Requests: 100, Window: time.Minute}}, Headroom: 0.1})
	// Budget 90: resyncs may fill 70% of it, creates 85%, deletes all.
	if n := fill(l, PriorityResync, now); n != 63 {
		t.Errorf("resyncs let through: %d, want 63", n)
	}
	if n := fill(l, PriorityCreate, now); n != 77-63 {
		t.Errorf("creates after the resyncs: %d, want %d", n, 77-63)
	}
	if _, wait := l.reserve(PriorityResync, now); wait <= 0 {
		t.Error("a resync went after the creates filled their share")
	}
	if n := fill(l, PriorityDelete, now); n != 90-77 {
		t.Errorf("deletes after the creates: %d, want %d", n, 90-77)
	}
	_, wait := l.reserve(PriorityDelete, now)
	if wait != time.Minute {
		t.Errorf("a full window says wait %v, want the window (%v) until the oldest request leaves", wait, time.Minute)
	}
	later := now.Add(time.Minute)
	if finish, _ := l.reserve(PriorityResync, later); finish == nil {
		t.Error("the window did not slide: still full a window later")
	}
}

func TestLimiterPutsPoolRefillsBetweenCreatesAndResyncs(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newLimiter(LimiterOptions{Limits: []RateLimit{{Requests: 100, Window: time.Minute}}, Headroom: 0.1})
	// Budget 90: pool refills may fill 80% of it (72), real creates 85% (77).
	if n := fill(l, PriorityPool, now); n != 72 {
		t.Errorf("pool refills let through: %d, want 72", n)
	}
	if _, wait := l.reserve(PriorityResync, now); wait <= 0 {
		t.Error("a resync went after the pool refills filled their share")
	}
	if n := fill(l, PriorityCreate, now); n != 77-72 {
		t.Errorf("creates after the pool refills: %d, want %d", n, 77-72)
	}
	if PriorityPool.String() != "pool" {
		t.Errorf("held-back label %q, want pool", PriorityPool.String())
	}
}

func TestLimiterCountsInFlightRequests(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newLimiter(LimiterOptions{Limits: []RateLimit{{Requests: 10, Window: time.Second}}, Headroom: 0.1})
	var pending []func(time.Time)
	for {
		finish, _ := l.reserve(PriorityDelete, now)
		if finish == nil {
			break
		}
		pending = append(pending, finish)
	}
	if len(pending) != 9 {
		t.Fatalf("%d requests in flight at once, want 9", len(pending))
	}
	// Still in flight long after the window: they have not been counted out.
	if finish, _ := l.reserve(PriorityDelete, now.Add(time.Hour)); finish != nil {
		t.Error("in-flight requests expired from the window")
	}
	pending[0](now.Add(time.Hour))
	if finish, _ := l.reserve(PriorityDelete, now.Add(time.Hour+time.Second)); finish == nil {
		t.Error("a finished request did not leave the window after it")
	}
}

func TestLimiterFollowsDigitalOceansCount(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newLimiter(LimiterOptions{Limits: []RateLimit{{Requests: 250, Window: time.Minute}, {Requests: 5000, Window: time.Hour}}, Headroom: 0.1})
	// Someone else used the token: DigitalOcean says 4,400 of 5,000 are spent
	// for the next 10 minutes, although this limiter sent nothing.
	h := http.Header{}
	h.Set("ratelimit-limit", "5000")
	h.Set("ratelimit-remaining", "600")
	h.Set("ratelimit-reset", strconv.FormatInt(now.Add(10*time.Minute).Unix(), 10))
	l.observe(now, h)
	// The hourly budget is 4,500, creates may use 85% of it (3,825): none left.
	if _, wait := l.reserve(PriorityCreate, now); wait != 10*time.Minute {
		t.Errorf("create after DigitalOcean reported 4,400 spent: wait %v, want 10m until its reset", wait)
	}
	if n := fill(l, PriorityDelete, now); n != 100 {
		t.Errorf("deletes let through: %d, want the 100 left of the 4,500 budget", n)
	}
	if finish, _ := l.reserve(PriorityCreate, now.Add(10*time.Minute)); finish == nil {
		t.Error("still held back after DigitalOcean's reset")
	}
	// A header for a limit the limiter does not know applies to its longest window.
	h.Set("ratelimit-limit", "9999")
	h.Set("ratelimit-remaining", "0")
	l.observe(now, h)
	if _, wait := l.reserve(PriorityDelete, now); wait <= 0 {
		t.Error("an exhausted budget reported under an unknown limit was ignored")
	}
	// Headers it cannot read change nothing.
	fresh := newLimiter(LimiterOptions{})
	fresh.observe(now, http.Header{"Ratelimit-Remaining": {"x"}})
	if finish, _ := fresh.reserve(PriorityResync, now); finish == nil {
		t.Error("unreadable headers held requests back")
	}
}

// TestTransportHoldsBackByPriority runs the limiter in the client's
// transport: refused requests are not sent and come back as a
// HeldBackError that Classify turns into a RateLimited wait; a 429 from
// DigitalOcean silences the token for its Retry-After.
func TestTransportHoldsBackByPriority(t *testing.T) {
	sent := 0
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent++
		if status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "30")
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	tr := &countingTransport{next: http.DefaultTransport, tokenHash: "test", flight: newInFlight(),
		limit: newLimiter(LimiterOptions{Limits: []RateLimit{{Requests: 10, Window: time.Hour}}, Headroom: 0.1})}
	do := func(ctx context.Context, method string) error {
		req, _ := http.NewRequestWithContext(ctx, method, srv.URL+"/v2/droplets", nil)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	resync := WithPriority(context.Background(), PriorityResync)
	for i := 0; i < 6; i++ { // 70% of a budget of 9, rounded
		if err := do(resync, http.MethodGet); err != nil {
			t.Fatalf("resync %d: %v", i, err)
		}
	}
	err := do(resync, http.MethodGet)
	var held *HeldBackError
	if !errors.As(err, &held) || held.Priority != PriorityResync {
		t.Fatalf("7th resync: %v, want it held back", err)
	}
	if f := Classify(err); f.Reason != "RateLimited" || f.RetryAfter != held.Wait {
		t.Errorf("Classify(held back) = %+v", f)
	}
	// A GET without a marked priority is a resync; a DELETE is a delete.
	if err := do(context.Background(), http.MethodGet); !errors.As(err, &held) {
		t.Errorf("unmarked GET: %v, want held back like a resync", err)
	}
	if err := do(context.Background(), http.MethodDelete); err != nil {
		t.Errorf("DELETE while resyncs are held back: %v", err)
	}
	if sent != 7 {
		t.Errorf("server saw %d requests, want 7: held-back requests must not be sent", sent)
	}
	status = http.StatusTooManyRequests
	_ = do(context.Background(), http.MethodDelete)
	status = http.StatusOK
	err = do(context.Background(), http.MethodDelete)
	if !errors.As(err, &held) || held.Wait < 29*time.Second {
		t.Errorf("delete right after a 429 with Retry-After 30: %v, want held back ~30s", err)
	}
}

func TestParseRateLimits(t *testing.T) {
	got, err := ParseRateLimits("250/1m, 5000/1h")
	if err != nil || len(got) != 2 || got[0] != (RateLimit{250, time.Minute}) || got[1] != (RateLimit{5000, time.Hour}) {
		t.Errorf("ParseRateLimits = %v, %v", got, err)
	}
	for _, bad := range []string{"", "250", "250/", "x/1m", "0/1m", "250/-1m", "250/1m,"} {
		if _, err := ParseRateLimits(bad); err == nil {
			t.Errorf("ParseRateLimits(%q) accepted", bad)
		}
	}
}
