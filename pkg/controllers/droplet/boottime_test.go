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
	if wait <= 10*time.Second || wait > 15*time.Second {
		t.Errorf("fastest boot 20 s: wait %v, want about 15 s", wait)
	}
	if wait := b.until(other, now); wait != 0 {
		t.Errorf("another token waits %v for this one's boots", wait)
	}
}
