package reliability

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
)

// TestClientsPaceThemselves sends more requests than the (scaled) limit
// allows from many goroutines at once: the clients must spread them so
// that DigitalOcean never answers 429, answering the excess with a local
// 429 (nothing sent) when the wait for a slot is long.
func TestClientsPaceThemselves(t *testing.T) {
	do := fakedo.New(fakedo.Options{RateLimits: scaledLimits})
	if err := do.Start(); err != nil {
		t.Fatal(err)
	}
	defer do.Close()
	token := newToken()
	do.AddAccount(token, fakedo.AccountOptions{})
	client, err := digitalocean.NewClients(do.URL(), clientLimits).For(token)
	if err != nil {
		t.Fatal(err)
	}

	const want = ratePerWindow + 60 // more than one window's worth
	var ok, heldBack, other atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ok.Load() < want {
				ctx, cancel := context.WithTimeout(context.Background(), digitalocean.CallTimeout)
				_, _, err := client.Account.Get(ctx)
				cancel()
				switch {
				case err == nil:
					ok.Add(1)
				case digitalocean.Classify(err).Reason == "RateLimited":
					heldBack.Add(1)
					time.Sleep(100 * time.Millisecond)
				default:
					other.Add(1)
					t.Errorf("unexpected error: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	limited := do.RequestCounts()[fakedo.RouteAccount+" 429"]
	t.Logf("%d requests answered in %v; %d held back locally; DigitalOcean answered 429 %d times", ok.Load(), took.Round(time.Millisecond), heldBack.Load(), limited)
	if limited != 0 {
		t.Errorf("DigitalOcean rate-limited %d requests: the clients do not pace themselves", limited)
	}
	if took < rateWindow {
		t.Errorf("%d requests in %v: more than the limit of %d per %v got through", ok.Load(), took, ratePerWindow, rateWindow)
	}
}

// TestClientsHoldBackAfter429 makes DigitalOcean answer 429 with a
// Retry-After: until it has passed, no request with that token may reach
// DigitalOcean, and afterwards they must flow again.
func TestClientsHoldBackAfter429(t *testing.T) {
	do := fakedo.New(fakedo.Options{RateLimits: scaledLimits})
	if err := do.Start(); err != nil {
		t.Fatal(err)
	}
	defer do.Close()
	token, other := newToken(), newToken()
	do.AddAccount(token, fakedo.AccountOptions{})
	do.AddAccount(other, fakedo.AccountOptions{})
	clients := digitalocean.NewClients(do.URL(), clientLimits)
	client, _ := clients.For(token)
	otherClient, _ := clients.For(other)
	ctx := context.Background()

	until := time.Now().Add(2 * time.Second)
	do.SetFaults(fakedo.Faults{Rules: map[string]fakedo.FaultRule{fakedo.RouteAccount: {Force429Until: until}}})
	_, resp, err := client.Account.Get(ctx)
	if f := digitalocean.Classify(err); f.Reason != "RateLimited" || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("first request: %v", err)
	}
	do.SetFaults(fakedo.Faults{})
	sent := len(do.Requests())
	for i := 0; i < 20; i++ {
		_, _, err := client.Account.Get(ctx)
		if f := digitalocean.Classify(err); f.Reason != "RateLimited" || f.RetryAfter <= 0 || f.RetryAfter > 2*time.Second {
			t.Fatalf("request %d during the Retry-After: reason %q retry after %v (%v)", i, f.Reason, f.RetryAfter, err)
		}
	}
	if n := len(do.Requests()) - sent; n != 0 {
		t.Errorf("%d requests reached DigitalOcean during the Retry-After", n)
	}
	if _, _, err := otherClient.Account.Get(ctx); err != nil {
		t.Errorf("another token's request was held back too: %v", err)
	}
	time.Sleep(time.Until(until) + 100*time.Millisecond)
	if _, _, err := client.Account.Get(ctx); err != nil {
		t.Errorf("after the Retry-After: %v", err)
	}
}

// TestBackoff: transient failures back off exponentially per object, with
// jitter, up to a cap; success resets; a 429 waits its Retry-After plus a
// spread; permanent failures keep their own delay.
func TestBackoff(t *testing.T) {
	b := digitalocean.NewBackoff()
	unavailable := digitalocean.Failure{Reason: "Unavailable", RetryAfter: 10 * time.Second}
	for n := 0; n < 12; n++ {
		d := b.Delay("a", unavailable)
		full := min(digitalocean.BackoffMax, digitalocean.BackoffBase<<n)
		if d < full/2 || d > full {
			t.Errorf("failure %d: delay %v outside [%v, %v]", n+1, d, full/2, full)
		}
	}
	if d := b.Delay("b", unavailable); d > digitalocean.BackoffBase {
		t.Errorf("another object's first delay is %v: backoff is not per object", d)
	}
	b.Reset("a")
	if d := b.Delay("a", unavailable); d > digitalocean.BackoffBase {
		t.Errorf("after a reset the delay is %v", d)
	}
	seen := map[time.Duration]bool{}
	for i := 0; i < 20; i++ {
		d := b.Delay("c", digitalocean.Failure{Reason: "RateLimited", RetryAfter: 3 * time.Second})
		if d < 3*time.Second || d > 5*time.Second {
			t.Errorf("rate-limited delay %v, want Retry-After 3s plus at most 2s", d)
		}
		seen[d] = true
	}
	if len(seen) < 10 {
		t.Errorf("rate-limited delays are not spread: %d distinct values in 20", len(seen))
	}
	if d := b.Delay("d", digitalocean.Failure{Reason: "Unauthorized", RetryAfter: 5 * time.Minute, Permanent: true}); d != 5*time.Minute {
		t.Errorf("permanent failure delay %v, want its own 5m", d)
	}
}
