package deletepause

import (
	"testing"
	"time"
)

func TestWorkWaitsForDeletesToPause(t *testing.T) {
	const delay = time.Minute
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := New(start)
	if w := p.Wait(start, start, delay); w != delay {
		t.Errorf("at the start: wait %v, want a delay (what went before is unknown)", w)
	}
	if w := p.Wait(start.Add(delay), start, delay); w != 0 {
		t.Errorf("a delay after the start with no delete: wait %v, want 0", w)
	}

	deleted := start.Add(2 * delay)
	p.Note(deleted)
	p.Note(deleted.Add(-time.Second)) // an older note changes nothing
	if w := p.Wait(deleted.Add(delay/2), start, delay); w != delay/2 {
		t.Errorf("half a delay after a delete: wait %v, want half a delay", w)
	}
	if w := p.Wait(deleted.Add(delay), start, delay); w != 0 {
		t.Errorf("a delay after the last delete: wait %v, want 0", w)
	}

	// Deletes every half delay keep deferring the work, up to the cap.
	since := deleted
	for at := deleted; at.Before(deleted.Add(20 * delay)); at = at.Add(delay / 2) {
		p.Note(at)
		w := p.Wait(at, since, delay)
		if capAt := since.Add(MaxDeferDelays * delay); at.Before(capAt) && w == 0 {
			t.Fatalf("%v after it began to wait, deletes going on: no wait, want one until the cap", at.Sub(since))
		} else if !at.Before(capAt) && w != 0 {
			t.Fatalf("%v after it began to wait: wait %v, want none past the cap", at.Sub(since), w)
		}
	}
}

func TestUncappedWorkWaitsAsLongAsDeletesGoOn(t *testing.T) {
	const delay = time.Minute
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := New(start)
	for at := start; at.Before(start.Add(3 * MaxDeferDelays * delay)); at = at.Add(delay / 2) {
		p.Note(at)
		if w := p.Until(at, delay); w != delay {
			t.Fatalf("%v into a stream of deletes: wait %v, want a whole delay", at.Sub(start), w)
		}
	}
	last := p.Last()
	if w := p.Until(last.Add(delay), delay); w != 0 {
		t.Errorf("a delay after the last delete: wait %v, want 0", w)
	}
}
