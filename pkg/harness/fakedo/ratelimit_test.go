package fakedo

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"
)

func TestRateLimitPerMinute(t *testing.T) {
	srv := startFake(t, Options{RateLimits: RateLimits{PerMinute: 5, PerHour: 100, Minute: 600 * time.Millisecond}}, AccountOptions{})
	c := newClient(t, srv, testToken)
	ctx := ctxT(t)

	for i := 1; i <= 5; i++ {
		_, resp, err := c.Account.Get(ctx)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if resp.Rate.Limit != 100 || resp.Rate.Remaining != 100-i {
			t.Fatalf("request %d: rate %+v", i, resp.Rate)
		}
		if resp.Rate.Reset.Before(time.Now().Add(-time.Second)) {
			t.Fatalf("reset %v in the past", resp.Rate.Reset)
		}
	}
	_, resp, err := c.Account.Get(ctx)
	er := apiErr(t, err, http.StatusTooManyRequests)
	if er.Message != msgRateLimited {
		t.Fatalf("message = %q", er.Message)
	}
	ra, convErr := strconv.Atoi(resp.Header.Get("Retry-After"))
	if convErr != nil || ra < 1 {
		t.Fatalf("Retry-After = %q", resp.Header.Get("Retry-After"))
	}
	if resp.Rate.Limit != 100 || resp.Rate.Remaining != 95 {
		t.Fatalf("rate on 429 = %+v", resp.Rate)
	}

	// Another token has its own budget.
	srv.AddAccount("second", AccountOptions{})
	if _, _, err := newClient(t, srv, "second").Account.Get(ctx); err != nil {
		t.Fatalf("second token limited by the first: %v", err)
	}

	// The window slides: once the first requests are 600ms old, it admits again.
	time.Sleep(650 * time.Millisecond)
	if _, _, err := c.Account.Get(ctx); err != nil {
		t.Fatalf("after window: %v", err)
	}
	if got := srv.RequestCounts()[RouteAccount+" 429"]; got != 1 {
		t.Fatalf("429 count = %d", got)
	}
}

func TestRateLimitCountsErrorsAndHourly(t *testing.T) {
	clock := newManualClock()
	srv := startFake(t, Options{Now: clock.Now, RateLimits: RateLimits{PerMinute: 100, PerHour: 3}}, AccountOptions{})
	c := newClient(t, srv, testToken)
	ctx := ctxT(t)
	_, _, err := c.Droplets.Get(ctx, 1) // 404 still counts
	wantStatus(t, err, http.StatusNotFound)
	for i := 0; i < 2; i++ {
		if _, _, err := c.Account.Get(ctx); err != nil {
			t.Fatal(err)
		}
	}
	_, resp, err := c.Account.Get(ctx)
	wantStatus(t, err, http.StatusTooManyRequests)
	if ra, _ := strconv.Atoi(resp.Header.Get("Retry-After")); ra != 3600 {
		t.Fatalf("Retry-After = %d, want 3600 (oldest request expires in an hour)", ra)
	}
	clock.Advance(time.Hour)
	if _, _, err := c.Account.Get(ctx); err != nil {
		t.Fatalf("after an hour: %v", err)
	}
}

func TestKeyListLimit(t *testing.T) {
	srv := startFake(t, Options{RateLimits: RateLimits{KeyListPerWindow: 3, KeyListWindow: time.Minute}}, AccountOptions{})
	c := newClient(t, srv, testToken)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if _, _, err := c.Keys.List(ctx, nil); err != nil {
			t.Fatalf("list %d: %v", i, err)
		}
	}
	_, _, err := c.Keys.List(ctx, nil)
	wantStatus(t, err, http.StatusTooManyRequests)
	if _, _, err := c.Account.Get(ctx); err != nil {
		t.Fatalf("other endpoints must stay available: %v", err)
	}
}

func TestRateLimitDisabledStillReportsBudget(t *testing.T) {
	srv := startFake(t, Options{RateLimits: RateLimits{Disabled: true, PerMinute: 1}}, AccountOptions{})
	c := newClient(t, srv, testToken)
	for i := 0; i < 5; i++ {
		_, resp, err := c.Account.Get(context.Background())
		if err != nil || resp.Rate.Remaining != DefaultRatePerHour {
			t.Fatalf("request %d: %+v %v", i, resp.Rate, err)
		}
	}
}

func TestSlidingWindowUnit(t *testing.T) {
	l := newRateLimiter(RateLimits{PerMinute: 2, PerHour: 10, Minute: time.Second}.withDefaults())
	t0 := time.Unix(1000, 0)
	if !l.admit(t0, false).allowed || !l.admit(t0.Add(500*time.Millisecond), false).allowed {
		t.Fatal("first two must pass")
	}
	d := l.admit(t0.Add(900*time.Millisecond), false)
	if d.allowed || d.retryAfter != 100*time.Millisecond {
		t.Fatalf("third: %+v", d)
	}
	if !l.admit(t0.Add(time.Second), false).allowed {
		t.Fatal("slot should free when the oldest leaves the window")
	}
	if l.admit(t0.Add(1400*time.Millisecond), false).allowed {
		t.Fatal("window still holds two requests")
	}
}
