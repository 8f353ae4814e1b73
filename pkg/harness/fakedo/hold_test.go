package fakedo

import (
	"context"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
)

// awaitHold fails the test unless h is reached within a few seconds.
func awaitHold(t *testing.T, h *Hold) {
	t.Helper()
	select {
	case <-h.Reached():
	case <-time.After(5 * time.Second):
		t.Fatal("no request reached the hold")
	}
}

// lastRecord waits until the log has a record for pattern and returns the last one.
func lastRecord(t *testing.T, srv *Server, pattern string) RequestRecord {
	t.Helper()
	var rec RequestRecord
	testutil.Eventually(t, 5*time.Second, "a record for "+pattern, func() string {
		for _, r := range srv.Requests() {
			if r.Pattern == pattern {
				rec = r
			}
		}
		if rec.Pattern == "" {
			return "none yet"
		}
		return ""
	})
	return rec
}

func TestHoldBeforeApplyWaitsForRelease(t *testing.T) {
	srv := startFake(t, Options{}, AccountOptions{})
	c := newClient(t, srv, testToken)
	_, line := newTestKey(t)
	hold := srv.HoldBeforeApply(RouteCreateKey)

	ctx := ctxT(t)
	done := make(chan error, 1)
	go func() {
		_, _, err := c.Keys.Create(ctx, &godo.KeyCreateRequest{Name: "held", PublicKey: line})
		done <- err
	}()
	awaitHold(t, hold)
	if n := len(srv.Keys(testToken)); n != 0 {
		t.Fatalf("%d keys while the create is held before apply", n)
	}
	// Other routes are not held.
	if _, _, err := c.Keys.List(ctxT(t), nil); err != nil {
		t.Fatalf("list while a create is held: %v", err)
	}
	hold.Release()
	if err := <-done; err != nil {
		t.Fatalf("released create: %v", err)
	}
	if n := len(srv.Keys(testToken)); n != 1 {
		t.Fatalf("%d keys after the release, want 1", n)
	}
	hold.Release() // a second release is harmless
}

func TestHoldBeforeApplyClientGoneIsNotApplied(t *testing.T) {
	srv := startFake(t, Options{}, AccountOptions{})
	c := newClient(t, srv, testToken)
	hold := srv.HoldBeforeApply(RouteCreateDroplets)
	defer hold.Release()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := c.Droplets.Create(ctx, basicCreate("never"))
		done <- err
	}()
	awaitHold(t, hold)
	cancel()
	if err := <-done; err == nil {
		t.Fatal("create succeeded although its client left")
	}
	if rec := lastRecord(t, srv, RouteCreateDroplets); rec.Status != 0 || rec.Dropped {
		t.Errorf("record %+v, want Status 0 (client left)", rec)
	}
	hold.Release()
	if n := len(srv.Droplets(testToken)); n != 0 {
		t.Fatalf("%d droplets: a create whose client left before apply was applied", n)
	}
}

func TestHoldAfterApplyAppliesThenHoldsTheAnswer(t *testing.T) {
	srv := startFake(t, Options{}, AccountOptions{})
	c := newClient(t, srv, testToken)
	hold := srv.HoldAfterApply(RouteCreateDroplets)
	defer hold.Release()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := c.Droplets.Create(ctx, basicCreate("applied"))
		done <- err
	}()
	awaitHold(t, hold)
	if ds := srv.Droplets(testToken); len(ds) != 1 || ds[0].Name != "applied" {
		t.Fatalf("held after apply, DigitalOcean has %+v, want the droplet", ds)
	}
	select {
	case err := <-done:
		t.Fatalf("the client got an answer while it was held: %v", err)
	default:
	}
	cancel() // the client dies before it hears of its droplet
	if err := <-done; err == nil {
		t.Fatal("create succeeded although its client left")
	}
	if rec := lastRecord(t, srv, RouteCreateDroplets); rec.Status != 202 || !rec.Dropped {
		t.Errorf("record %+v, want Status 202 and Dropped", rec)
	}

	hold.Release()
	if _, _, err := c.Droplets.Create(ctxT(t), basicCreate("after")); err != nil {
		t.Fatalf("create after the release: %v", err)
	}
	if n := len(srv.Droplets(testToken)); n != 2 {
		t.Fatalf("%d droplets, want 2", n)
	}
}

func TestHoldAfterApplyReleaseAnswers(t *testing.T) {
	srv := startFake(t, Options{}, AccountOptions{})
	c := newClient(t, srv, testToken)
	_, line := newTestKey(t)
	hold := srv.HoldAfterApply(RouteCreateKey)

	type result struct {
		key *godo.Key
		err error
	}
	ctx := ctxT(t)
	done := make(chan result, 1)
	go func() {
		k, _, err := c.Keys.Create(ctx, &godo.KeyCreateRequest{Name: "held", PublicKey: line})
		done <- result{k, err}
	}()
	awaitHold(t, hold)
	hold.Release()
	r := <-done
	if r.err != nil {
		t.Fatalf("released create: %v", r.err)
	}
	if keys := srv.Keys(testToken); len(keys) != 1 || keys[0].ID != r.key.ID {
		t.Fatalf("DigitalOcean has %+v, the client got key %d", keys, r.key.ID)
	}
}
