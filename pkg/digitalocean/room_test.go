package digitalocean

import (
	"testing"
	"time"
)

// Asking for room takes no slot, and says what reserve would.
func TestRoomTakesNoSlot(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newLimiter(LimiterOptions{Limits: []RateLimit{{Requests: 100, Window: time.Minute}}, Headroom: 0.1})
	for range 200 {
		if wait := l.room(PriorityCreate, now); wait != 0 {
			t.Fatalf("empty limiter: room %v", wait)
		}
	}
	if n := fill(l, PriorityCreate, now); n != 77 {
		t.Fatalf("asking for room took slots: %d creates fit, want 77", n)
	}
	if wait := l.room(PriorityCreate, now); wait <= 0 {
		t.Errorf("full for creates, but room says %v", wait)
	}
	if wait := l.room(PriorityDelete, now); wait != 0 {
		t.Errorf("deletes still have room, but room says %v", wait)
	}
}

func TestLoadIsTheFullestWindowsShare(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newLimiter(LimiterOptions{Limits: []RateLimit{{Requests: 100, Window: time.Minute}, {Requests: 1000, Window: time.Hour}}, Headroom: 0.1})
	if got := l.load(now); got != 0 {
		t.Errorf("idle load %v", got)
	}
	for range 45 {
		finish, _ := l.reserve(PriorityCreate, now)
		finish(now)
	}
	if got := l.load(now); got != 0.5 {
		t.Errorf("45 of the minute's 90: load %v, want 0.5", got)
	}
	if got := l.load(now.Add(2 * time.Minute)); got != 0.05 {
		t.Errorf("after the minute, 45 of the hour's 900: load %v, want 0.05", got)
	}
}
