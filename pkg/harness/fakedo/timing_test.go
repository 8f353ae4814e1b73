package fakedo

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/digitalocean/godo"
)

func TestSetTimingRetimesWindowsAndKeepsTheirLogs(t *testing.T) {
	clock := newManualClock()
	srv := startFake(t, Options{Now: clock.Now, RateLimits: RateLimits{PerMinute: 2, PerHour: 100, Minute: time.Hour}}, AccountOptions{})
	c := newClient(t, srv, testToken)
	ctx := ctxT(t)
	for i := 0; i < 2; i++ {
		if _, _, err := c.Account.Get(ctx); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	_, _, err := c.Account.Get(ctx)
	wantStatus(t, err, http.StatusTooManyRequests)

	// A "minute" of 10 s: the two requests, 5 s old, still count.
	clock.Advance(5 * time.Second)
	srv.SetTiming(Timing{RateLimits: RateLimits{PerMinute: 2, PerHour: 100, Minute: 10 * time.Second}})
	_, resp, err := c.Account.Get(ctx)
	wantStatus(t, err, http.StatusTooManyRequests)
	if ra := resp.Header.Get("Retry-After"); ra != "5" {
		t.Errorf("Retry-After = %q, want 5 (the first request leaves the new window in 5 s)", ra)
	}
	// Once they are older than the new window they expire.
	clock.Advance(5 * time.Second)
	_, resp, err = c.Account.Get(ctx)
	if err != nil {
		t.Fatalf("after the new window: %v", err)
	}
	// The hourly log was kept too: 3 admitted so far.
	if resp.Rate.Remaining != 97 {
		t.Errorf("hourly remaining = %d, want 97", resp.Rate.Remaining)
	}

	// Accounts made later get the new limits.
	srv.SetTiming(Timing{RateLimits: RateLimits{PerMinute: 1, PerHour: 100, Minute: time.Hour}})
	srv.AddAccount("later", AccountOptions{})
	later := newClient(t, srv, "later")
	if _, _, err := later.Account.Get(ctx); err != nil {
		t.Fatal(err)
	}
	_, _, err = later.Account.Get(ctx)
	wantStatus(t, err, http.StatusTooManyRequests)
}

func TestSetTimingChangesBootDelayAndDeleteLag(t *testing.T) {
	clock := newManualClock()
	srv := startFake(t, Options{Now: clock.Now, BootDelay: time.Hour, DeleteLag: time.Hour,
		RateLimits: RateLimits{Disabled: true}}, AccountOptions{})
	c := newClient(t, srv, testToken)
	ctx := ctxT(t)
	if _, _, err := c.Droplets.Create(ctx, basicCreate("old")); err != nil {
		t.Fatal(err)
	}
	gone, _, err := c.Droplets.Create(ctx, basicCreate("gone"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Droplets.Delete(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}

	srv.SetTiming(Timing{BootDelay: time.Minute, RateLimits: RateLimits{Disabled: true}}) // DeleteLag 0: none
	if _, _, err := c.Droplets.Create(ctx, basicCreate("fresh")); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	status := map[string]string{}
	list, _, err := c.Droplets.List(ctx, &godo.ListOptions{PerPage: 200})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range list {
		status[d.Name] = d.Status
	}
	if status["fresh"] != statusActive {
		t.Errorf("a droplet made after SetTiming is %q after the new boot delay", status["fresh"])
	}
	if status["old"] != statusNew {
		t.Errorf("a droplet made before SetTiming is %q: it should keep its hour-long boot", status["old"])
	}
	if _, listed := status["gone"]; listed {
		t.Error("a deleted droplet is still listed after the delete lag was removed")
	}
}

// Run with -race: SetTiming while requests are served.
func TestSetTimingWhileServing(t *testing.T) {
	srv := startFake(t, Options{BootDelay: NoDelay, RateLimits: RateLimits{PerMinute: 1000, PerHour: 100000}},
		AccountOptions{DropletLimit: 1000})
	c := newClient(t, srv, testToken)
	ctx := ctxT(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if i%2 == 0 {
					if d, _, err := c.Droplets.Create(ctx, basicCreate("r")); err == nil {
						_, _ = c.Droplets.Delete(ctx, d.ID)
					}
				} else {
					_, _, _ = c.Droplets.List(ctx, nil)
					_, _, _ = c.Keys.List(ctx, nil)
				}
			}
		}()
	}
	for i := 0; i < 50; i++ {
		srv.SetTiming(Timing{BootDelay: time.Duration(i%3) * time.Millisecond, DeleteLag: time.Duration(i%2) * time.Millisecond,
			RateLimits: RateLimits{PerMinute: 1000, PerHour: 100000, Minute: time.Duration(i+1) * time.Second,
				Hour: time.Duration(i+1) * time.Minute, KeyListWindow: time.Millisecond}})
		srv.AddAccount("extra", AccountOptions{}) // account creation races SetTiming too
		time.Sleep(2 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
}
