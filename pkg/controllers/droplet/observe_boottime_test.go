package droplet

import (
	"testing"
	"time"

	"github.com/digitalocean/godo"
)

func TestBootTimesWaitForTheFastestBootSeen(t *testing.T) {
	b := newBootTimes(0)
	client, other := &godo.Client{}, &godo.Client{}
	now := time.Now()
	if wait := b.until(client, now); wait != 0 {
		t.Errorf("no boot seen yet, but wait %v", wait)
	}
	b.note(client, 40*time.Second)
	b.note(client, 20*time.Second)
	b.note(client, 60*time.Second)
	wait := b.until(client, now)
	if wait <= 15*time.Second || wait > 18*time.Second {
		t.Errorf("fastest boot 20 s: wait %v, want about 18 s", wait)
	}
	if wait := b.until(other, now); wait != 0 {
		t.Errorf("another token waits %v for this one's boots", wait)
	}
}

// The shortest boot falls with the first faster boot, holds through a few
// slow ones, and rises once a window and a quorum of boots were all slower.
func TestBootTimesFollowRecentBoots(t *testing.T) {
	start := time.Now()
	clock := start
	b := newBootTimes(10 * time.Minute)
	b.now = func() time.Time { return clock }
	client := &godo.Client{}
	boots := func(n int, boot time.Duration) {
		for range n {
			b.note(client, boot)
		}
	}
	expect := func(what string, want time.Duration) {
		t.Helper()
		if got, ok := b.shortest(client); !ok || got != want {
			t.Errorf("%s: shortest boot %v (learned: %v), want %v", what, got, ok, want)
		}
	}
	boots(bootQuorum, 30*time.Second)
	expect("30 s boots", 30*time.Second)
	clock = start.Add(time.Minute)
	boots(1, 20*time.Second)
	expect("one faster boot", 20*time.Second)
	clock = start.Add(2 * time.Minute)
	boots(bootQuorum, 60*time.Second)
	expect("a list of slow boots within the window", 20*time.Second)
	clock = start.Add(time.Minute + 10*time.Minute - time.Second)
	expect("slow boots, the window not over", 20*time.Second)
	clock = clock.Add(2 * time.Second)
	expect("a window and a quorum of slower boots", 60*time.Second)
	clock = clock.Add(5 * time.Hour)
	expect("no boot for hours", 60*time.Second)
}

// One slow boot after a quiet hour is not taken for slower boots: the
// shortest boot is taken over a quorum of boots.
func TestBootTimesHoldThroughOneSlowBoot(t *testing.T) {
	clock := time.Now()
	b := newBootTimes(10 * time.Minute)
	b.now = func() time.Time { return clock }
	client := &godo.Client{}
	for range bootQuorum {
		b.note(client, 30*time.Second)
	}
	clock = clock.Add(time.Hour)
	b.note(client, 90*time.Second)
	if got, _ := b.shortest(client); got != 30*time.Second {
		t.Errorf("shortest boot %v after one slow boot, want the 30 s learned before", got)
	}
}

// A token's memory stays a few slots however many droplets boot.
func TestBootTimesMemoryIsBounded(t *testing.T) {
	clock := time.Now()
	b := newBootTimes(10 * time.Minute)
	b.now = func() time.Time { return clock }
	client := &godo.Client{}
	for i := range 20000 {
		clock = clock.Add(7 * time.Second)
		b.note(client, time.Duration(30+i%40)*time.Second)
		if n := len(b.tokens[client]); n > bootSlots+1+bootQuorum {
			t.Fatalf("after %d boots: %d slots kept", i+1, n)
		}
	}
}

func TestBootTimesLearnTheLeastABootCanHaveTaken(t *testing.T) {
	taken := time.Now().Truncate(time.Second)
	droplet := func(id int, age time.Duration, status string) *godo.Droplet {
		return &godo.Droplet{ID: id, Status: status, Created: taken.Add(-age).UTC().Format(time.RFC3339)}
	}
	before := &fleetList{taken: taken, droplets: listedAll(map[int]*godo.Droplet{
		1: droplet(1, 29*time.Second, "new"),
		2: droplet(2, 10*time.Second, "new"),    // still booting after
		3: droplet(3, 50*time.Second, "active"), // active in both: no news
	})}
	after := &fleetList{taken: taken.Add(time.Second), droplets: listedAll(map[int]*godo.Droplet{
		1: droplet(1, 29*time.Second, "active"),
		2: droplet(2, 10*time.Second, "new"),
		3: droplet(3, 50*time.Second, "active"),
		4: droplet(4, 5*time.Second, "active"), // first seen active: its boot is unknown
	})}
	b := newBootTimes(0)
	client := &godo.Client{}
	b.noteLists(client, before, after)
	if got, _ := b.shortest(client); got != 28*time.Second {
		t.Errorf("learned %v; want 28 s: booting 29 s at the first list, less the second created_at leaves out", got)
	}
}

// Two lists a minute apart say little of a droplet seen booting seconds
// after its create: it may have booted at any time in that minute.
func TestBootTimesIgnoreListsFarApart(t *testing.T) {
	taken := time.Now().Truncate(time.Second)
	created := taken.Add(-5 * time.Second).UTC().Format(time.RFC3339)
	before := &fleetList{taken: taken, droplets: listedAll(map[int]*godo.Droplet{1: {ID: 1, Status: "new", Created: created}})}
	after := &fleetList{taken: taken.Add(time.Minute), droplets: listedAll(map[int]*godo.Droplet{1: {ID: 1, Status: "active", Created: created}})}
	b := newBootTimes(0)
	client := &godo.Client{}
	b.noteLists(client, before, after)
	if got, ok := b.shortest(client); ok {
		t.Errorf("learned %v from lists a minute apart", got)
	}
}
