package digitalocean

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/digitalocean/godo"
)

// heldAPI answers GET /v2/account once release is closed; reached is
// closed when the first request arrives, and sent counts the requests.
type heldAPI struct {
	reached, release chan struct{}
	sent             atomic.Int32
	// callerLeft: a request's client went away before its answer.
	callerLeft atomic.Bool
}

func startHeldAPI(t *testing.T) (*heldAPI, *godo.Client, *Clients) {
	t.Helper()
	api := &heldAPI{reached: make(chan struct{}), release: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if api.sent.Add(1) == 1 {
			close(api.reached)
		}
		<-api.release
		if r.Context().Err() != nil {
			api.callerLeft.Store(true)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"account":{"droplet_limit":10}}`))
	}))
	t.Cleanup(srv.Close)
	clients := NewClients(srv.URL, LimiterOptions{Disabled: true})
	client, err := clients.For("dop_v1_stop")
	if err != nil {
		t.Fatal(err)
	}
	return api, client, clients
}

func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: nothing after 10s", what)
		panic("unreachable")
	}
}

// Stop waits for a request under way, and then for the pass that sent it
// to end (it records the answer first); the request is answered.
func TestStopWaitsForAPassThatSentARequest(t *testing.T) {
	api, client, clients := startHeldAPI(t)
	answered := make(chan error, 1)
	endPass := make(chan struct{})
	go func() {
		ctx, cancel := CallContext(context.Background())
		defer cancel()
		_, _, err := client.Account.Get(ctx)
		answered <- err
		<-endPass
	}()
	receive(t, api.reached, "request reaches DigitalOcean")

	// Nothing here can end before the test says so: a short timeout decides nothing.
	if clients.Stop(10 * time.Millisecond) {
		t.Fatal("Stop reported nothing under way while a request was unanswered")
	}
	close(api.release)
	if err := receive(t, answered, "answer"); err != nil {
		t.Fatalf("a request sent before Stop: %v", err)
	}
	if clients.Stop(10 * time.Millisecond) {
		t.Fatal("Stop reported nothing under way before the pass that sent the request ended")
	}
	close(endPass)
	if !clients.Stop(time.Minute) {
		t.Fatal("Stop still waits after the pass ended")
	}
}

// A request made after Stop is held until its context ends, and never sent.
func TestARequestAfterStopIsNeverSent(t *testing.T) {
	api, client, clients := startHeldAPI(t)
	close(api.release)
	if !clients.Stop(time.Minute) {
		t.Fatal("Stop waits with nothing under way")
	}
	ctx, cancel := context.WithCancel(context.Background())
	type outcome struct {
		err        error
		callerDone bool
	}
	done := make(chan outcome, 1)
	go func() {
		_, _, err := client.Account.Get(ctx)
		done <- outcome{err, ctx.Err() != nil}
	}()
	cancel()
	got := receive(t, done, "request after Stop")
	if got.err == nil || !errors.Is(got.err, context.Canceled) {
		t.Errorf("error %v, want one ending with the caller's context", got.err)
	}
	if !got.callerDone {
		t.Error("the request returned before its caller gave up")
	}
	if n := api.sent.Load(); n != 0 {
		t.Errorf("%d requests reached DigitalOcean after Stop", n)
	}
}

// A request sent is seen through to its answer although its caller gives
// up meanwhile (as the controllers' context ends at a stop).
func TestASentRequestOutlivesItsCallersCancel(t *testing.T) {
	api, client, _ := startHeldAPI(t)
	ctx, cancel := context.WithCancel(context.Background())
	answered := make(chan error, 1)
	go func() {
		_, _, err := client.Account.Get(ctx)
		answered <- err
	}()
	receive(t, api.reached, "request reaches DigitalOcean")
	cancel()
	close(api.release)
	if err := receive(t, answered, "answer"); err != nil {
		t.Errorf("a request canceled after it was sent: %v, want its answer", err)
	}
	if api.callerLeft.Load() {
		t.Error("the client went away before the answer")
	}
}
