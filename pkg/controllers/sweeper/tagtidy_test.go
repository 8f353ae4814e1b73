package sweeper

import (
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
)

// A round waits for a delay without Droplet deletes, so that an event's
// end is not shared with the tidy's requests, but a steady stream of
// deletes defers it only so long; with nothing deleted it does not run.
func TestTagTidyWaitsForDeletesToPause(t *testing.T) {
	delay := time.Minute
	start := time.Now()
	tt := newTagTidy(&sweeper{}, delay, time.Minute)
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
	tt.lastDeleting = deleted.Add(maxDeferDelays*delay - delay/2)
	if due, _ := tt.schedule(deleted.Add(maxDeferDelays*delay - time.Second)); due {
		t.Error("a round while deletes go on, before the cap")
	}
	if due, _ := tt.schedule(deleted.Add(maxDeferDelays*delay + time.Second)); !due {
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
