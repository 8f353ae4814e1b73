package sweeper

import (
	"context"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/deletepause"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
)

// A round waits for a delay without Droplet deletes, so that an event's
// end is not shared with the tidy's requests, but a steady stream of
// deletes defers it only so long; with nothing deleted it does not run.
func TestTagTidyWaitsForDeletesToPause(t *testing.T) {
	delay := time.Minute
	start := time.Now()
	tt := newTagTidy(&sweeper{}, delay, time.Minute, deletepause.New(time.Now()))
	if due, _ := tt.schedule(start); due {
		t.Error("a round due at the start: what was left behind is looked for a delay after it")
	}
	if due, _ := tt.schedule(start.Add(delay + time.Second)); !due {
		t.Error("no round a delay after the start")
	}

	tt.dirty = false
	if due, wait := tt.schedule(start.Add(time.Hour)); due || wait != 0 {
		t.Errorf("schedule without deletes = %v, %v; want no round until a delete", due, wait)
	}
	tt.noteDeleted()
	deleted := time.Now()
	if due, wait := tt.schedule(deleted.Add(delay / 2)); due || wait <= 0 || wait > delay {
		t.Errorf("half a delay after a delete: due %v, wait %v; want a wait of under a delay", due, wait)
	}
	if due, _ := tt.schedule(deleted.Add(delay + time.Millisecond)); !due {
		t.Error("no round a delay after the last delete")
	}
	// Deletes every half delay keep pushing it back, up to the cap.
	tt.pause.Note(deleted.Add(deletepause.MaxDeferDelays*delay - delay/2))
	if due, _ := tt.schedule(deleted.Add(deletepause.MaxDeferDelays*delay - time.Second)); due {
		t.Error("a round while deletes go on, before the cap")
	}
	if due, _ := tt.schedule(deleted.Add(deletepause.MaxDeferDelays*delay + time.Second)); !due {
		t.Error("deletes going on deferred the round past the cap")
	}
}

// What our objects may still use is never deleted: a live VM's tags, a
// Droplet's, a WarmPool's, a request's under way, a boot bucket still
// handed out.
func TestTagNeeds(t *testing.T) {
	now := time.Now()
	inUse := digitalocean.NewDeleteTag()
	n := tagNeeds{tags: map[string]bool{digitalocean.VMTag("live"): true}, bootLife: time.Minute,
		inUse: func(tag string) bool { return tag == inUse }}
	inst := digitalocean.InstallationTag("i")
	for tag, want := range map[string]bool{
		digitalocean.VMTag("live"):  true,
		digitalocean.VMTag("gone"):  false,
		inUse:                       true,
		digitalocean.NewDeleteTag(): false,
		digitalocean.BootTag(inst, now.Add(-time.Second), 1): true,
		digitalocean.BootTag(inst, now.Add(-time.Hour), 1):   false,
	} {
		if got := n.has(tag, now); got != want {
			t.Errorf("needed(%s) = %v, want %v", tag, got, want)
		}
	}
}

// A tag delete that keeps failing is tried again a delay on, never at
// once, even when another tag's confirmation fell due meanwhile: a round
// due at once would send the failing delete in a tight loop.
func TestTagTidyNeverLooksAgainAtOnce(t *testing.T) {
	const token = "tidy-token"
	srv, clients, client := newTidyFake(t, token)
	createTag := func(name string) {
		if _, _, err := client.Tags.Create(context.Background(), &godo.TagCreateRequest{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	delay := 500 * time.Millisecond
	tt := newTagTidy(&sweeper{clients: clients, opts: Options{InstallationID: "i"}}, delay, time.Minute, deletepause.New(time.Now()))
	needs := tagNeeds{tags: map[string]bool{}, inUse: func(string) bool { return false }}
	next := func() time.Duration {
		called := time.Now()
		return tt.tidyToken(context.Background(), client, "h", needs).Sub(called)
	}

	createTag(digitalocean.VMTag("first"))
	if wait := next(); wait < delay/2 { // first seen empty: confirmed a delay on
		t.Fatalf("after the first listing: next round in %v, want about %v", wait, delay)
	}
	createTag(digitalocean.VMTag("second"))
	srv.SetFaults(fakedo.Faults{Rules: map[string]fakedo.FaultRule{fakedo.RouteDeleteTag: {ErrorRate: 1, ErrorStatus: 503}}})
	time.Sleep(delay)
	for i := range 3 { // the first tag's delete fails each time; the second's confirmation falls due
		if wait := next(); wait < delay/2 {
			t.Fatalf("round %d with a failing delete: next round in %v, want a delay", i, wait)
		}
		time.Sleep(2 * delay)
	}
	srv.SetFaults(fakedo.Faults{})
	for range 3 {
		next()
		time.Sleep(delay)
	}
	for _, tag := range srv.Tags(token) {
		t.Errorf("tag %s left once deletes work", tag.Name)
	}
}

// A tag a batched delete keeps for its next batch is listed empty but in
// use: the tidy looks again a delay on rather than never, and deletes it
// once its user released it.
func TestATagInUseIsLookedAtAgain(t *testing.T) {
	const token = "dop_v1_in-use"
	srv, clients, client := newTidyFake(t, token)
	tag := digitalocean.NewDeleteTag()
	if _, _, err := client.Tags.Create(context.Background(), &godo.TagCreateRequest{Name: tag}); err != nil {
		t.Fatal(err)
	}
	delay := 200 * time.Millisecond
	tt := newTagTidy(&sweeper{clients: clients, opts: Options{InstallationID: "i"}}, delay, time.Minute, deletepause.New(time.Now()))
	release := clients.UseTag(tag)
	needs := func() tagNeeds { return tagNeeds{tags: map[string]bool{}, inUse: tt.inUse} }
	called := time.Now()
	if next := tt.tidyToken(context.Background(), client, "h", needs()); next.IsZero() || next.Sub(called) < delay/2 {
		t.Fatalf("an empty tag in use: next round at %v, want a delay on", next)
	}
	release()
	for range 3 {
		time.Sleep(delay)
		tt.tidyToken(context.Background(), client, "h", needs())
	}
	if left := srv.Tags(token); len(left) != 0 {
		t.Errorf("tags left once released: %v", left)
	}
}

// newTidyFake is a fake DigitalOcean with token's account, and clients of it.
func newTidyFake(t *testing.T, token string) (*fakedo.Server, *digitalocean.Clients, *godo.Client) {
	t.Helper()
	srv := fakedo.New(fakedo.Options{})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	srv.AddAccount(token, fakedo.AccountOptions{})
	clients := digitalocean.NewClients(srv.URL(), digitalocean.LimiterOptions{Disabled: true})
	client, err := clients.For(token)
	if err != nil {
		t.Fatal(err)
	}
	return srv, clients, client
}
