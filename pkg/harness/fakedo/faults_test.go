package fakedo

import (
	"errors"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/digitalocean/godo"
)

func TestDroppedResponseStillApplies(t *testing.T) {
	srv := startFake(t, Options{}, AccountOptions{})
	c := newClient(t, srv, testToken)
	srv.SetFaults(Faults{Rules: map[string]FaultRule{RouteCreateDroplets: {DropResponseAfterApply: 1}}})

	d, _, err := c.Droplets.Create(ctxT(t), basicCreate("lost"))
	if err == nil {
		t.Fatalf("want a transport error, got droplet %+v", d)
	}
	var er *godo.ErrorResponse
	if errors.As(err, &er) {
		t.Fatalf("want a transport error, got API error %v", er)
	}
	ds := srv.Droplets(testToken)
	if len(ds) != 1 || ds[0].Name != "lost" {
		t.Fatalf("the lost create was not applied: %+v", ds)
	}
	if got := srv.RequestCounts()[RouteCreateDroplets+" dropped"]; got != 1 {
		t.Fatalf("dropped count = %d (%v)", got, srv.RequestCounts())
	}

	srv.SetFaults(Faults{})
	if _, _, err := c.Droplets.Create(ctxT(t), basicCreate("kept")); err != nil {
		t.Fatalf("after clearing faults: %v", err)
	}
}

func TestInjectedErrorsAreNotApplied(t *testing.T) {
	srv := startFake(t, Options{}, AccountOptions{})
	c := newClient(t, srv, testToken)
	srv.SetFaults(Faults{Rules: map[string]FaultRule{AnyRoute: {ErrorRate: 1, ErrorStatus: 503}}})
	_, _, err := c.Droplets.Create(ctxT(t), basicCreate("nope"))
	wantStatus(t, err, http.StatusServiceUnavailable)
	if n := len(srv.Droplets(testToken)); n != 0 {
		t.Fatalf("failed create left %d droplets", n)
	}
}

func TestErrorRateIsSeededAndPartial(t *testing.T) {
	run := func() []int {
		srv := startFake(t, Options{Seed: 42}, AccountOptions{})
		srv.SetFaults(Faults{Rules: map[string]FaultRule{RouteAccount: {ErrorRate: 0.5, ErrorStatus: 502}}})
		c := newClient(t, srv, testToken)
		var statuses []int
		for i := 0; i < 40; i++ {
			_, resp, _ := c.Account.Get(ctxT(t))
			statuses = append(statuses, resp.StatusCode)
		}
		return statuses
	}
	a, b := run(), run()
	fails := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different faults at %d: %v vs %v", i, a, b)
		}
		if a[i] == http.StatusBadGateway {
			fails++
		}
	}
	if fails < 8 || fails > 32 {
		t.Fatalf("%d/40 failures at rate 0.5", fails)
	}
}

func TestLatencyAnd429Storm(t *testing.T) {
	clock := newManualClock()
	srv := startFake(t, Options{Now: clock.Now}, AccountOptions{})
	c := newClient(t, srv, testToken)
	srv.SetFaults(Faults{Rules: map[string]FaultRule{
		RouteAccount:     {Latency: 80 * time.Millisecond, LatencyJitter: 20 * time.Millisecond},
		RouteListRegions: {Force429Until: clock.Now().Add(90 * time.Second)},
	}})
	start := time.Now()
	if _, _, err := c.Account.Get(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 80*time.Millisecond {
		t.Fatalf("latency not applied: %v", el)
	}
	_, resp, err := c.Regions.List(ctxT(t), nil)
	wantStatus(t, err, http.StatusTooManyRequests)
	if ra, _ := strconv.Atoi(resp.Header.Get("Retry-After")); ra != 90 {
		t.Fatalf("Retry-After = %d, want 90", ra)
	}
	clock.Advance(90 * time.Second)
	if _, _, err := c.Regions.List(ctxT(t), nil); err != nil {
		t.Fatalf("storm should be over: %v", err)
	}
}

func TestNotFoundAfterCreate(t *testing.T) {
	clock := newManualClock()
	srv := startFake(t, Options{Now: clock.Now}, AccountOptions{})
	c := newClient(t, srv, testToken)
	srv.SetFaults(Faults{Rules: map[string]FaultRule{RouteGetDroplet: {NotFoundAfterCreate: 3 * time.Second}}})
	d, _, err := c.Droplets.Create(ctxT(t), basicCreate("lagging"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Droplets.Get(ctxT(t), d.ID)
	wantStatus(t, err, http.StatusNotFound)
	clock.Advance(3 * time.Second)
	if _, _, err := c.Droplets.Get(ctxT(t), d.ID); err != nil {
		t.Fatalf("after lag: %v", err)
	}
}

// TestConcurrentWorkers exercises the fake the way a controller with many
// workers does; run with -race to check the locking.
func TestConcurrentWorkers(t *testing.T) {
	srv := startFake(t, Options{BootDelay: NoDelay, RateLimits: RateLimits{Disabled: true}}, AccountOptions{DropletLimit: 1000})
	srv.SetFaults(Faults{Rules: map[string]FaultRule{RouteGetDroplet: {ErrorRate: 0.1}}})
	c := newClient(t, srv, testToken)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for w := 0; w < 20; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				d, _, err := c.Droplets.Create(ctxT(t), basicCreate("w"+strconv.Itoa(w)+"-"+strconv.Itoa(i)))
				if err != nil {
					errs <- err
					return
				}
				_, _, _ = c.Droplets.Get(ctxT(t), d.ID)
				_, _, _ = c.Droplets.ListByTag(ctxT(t), "hobbyfarm", &godo.ListOptions{PerPage: 200})
				if i%2 == 0 {
					_, _ = c.Droplets.Delete(ctxT(t), d.ID)
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := len(srv.Droplets(testToken)); n != 100 {
		t.Fatalf("%d droplets, want 100", n)
	}
}
