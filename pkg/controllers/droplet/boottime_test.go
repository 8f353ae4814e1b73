package droplet

import (
	"testing"
	"time"

	"github.com/digitalocean/godo"
)

func TestBootTimesWaitForTheFastestBootSeen(t *testing.T) {
	b := newBootTimes()
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

func TestBootTimesLearnTheLeastABootCanHaveTaken(t *testing.T) {
	taken := time.Now().Truncate(time.Second)
	droplet := func(id int, age time.Duration, status string) *godo.Droplet {
		return &godo.Droplet{ID: id, Status: status, Created: taken.Add(-age).UTC().Format(time.RFC3339)}
	}
	before := &fleetList{taken: taken, droplets: map[int]*godo.Droplet{
		1: droplet(1, 29*time.Second, "new"),
		2: droplet(2, 10*time.Second, "new"),    // still booting after
		3: droplet(3, 50*time.Second, "active"), // active in both: no news
	}}
	after := &fleetList{taken: taken.Add(time.Second), droplets: map[int]*godo.Droplet{
		1: droplet(1, 29*time.Second, "active"),
		2: droplet(2, 10*time.Second, "new"),
		3: droplet(3, 50*time.Second, "active"),
		4: droplet(4, 5*time.Second, "active"), // first seen active: its boot is unknown
	}}
	b := newBootTimes()
	client := &godo.Client{}
	b.noteLists(client, before, after)
	if got, want := b.fastest[client], 28*time.Second; got != want {
		t.Errorf("learned %v; want 28 s: booting 29 s at the first list, less the second created_at leaves out", got)
	}
}
