package droplet

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
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
	before := &dropletList{taken: taken, droplets: listedAll(map[int]*godo.Droplet{
		1: droplet(1, 29*time.Second, "new"),
		2: droplet(2, 10*time.Second, "new"),    // still booting after
		3: droplet(3, 50*time.Second, "active"), // active in both: no news
	})}
	after := &dropletList{taken: taken.Add(time.Second), droplets: listedAll(map[int]*godo.Droplet{
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
	before := &dropletList{taken: taken, droplets: listedAll(map[int]*godo.Droplet{1: {ID: 1, Status: "new", Created: created}})}
	after := &dropletList{taken: taken.Add(time.Minute), droplets: listedAll(map[int]*godo.Droplet{1: {ID: 1, Status: "active", Created: created}})}
	b := newBootTimes(0)
	client := &godo.Client{}
	b.noteLists(client, before, after)
	if got, ok := b.shortest(client); ok {
		t.Errorf("learned %v from lists a minute apart", got)
	}
}

// Time in this test runs ten times faster than at DigitalOcean: boots of 30
// then 60 s take 3 then 6 s, the boot resync is 1 s (100 ms), and the
// learning window 5 minutes (30 s). Not faster: created_at is to the second.
const (
	followScale      = 10
	followFastBoot   = 30 * time.Second / followScale
	followSlowBoot   = 60 * time.Second / followScale
	followBootResync = time.Second / followScale
	followWindow     = 5 * time.Minute / followScale
	// followEvery is how often a droplet is created, each in a boot bucket
	// of its own (a quiet installation's): a bucket's lists are then one
	// droplet's.
	followEvery = 200 * time.Millisecond
)

// When DigitalOcean's boots get slower (30 s to 60 s), the boot-bucket lists
// a droplet costs go back, within minutes, to what they were at 30 s boots:
// the shortest boot follows the boots seen recently. Kept at the fastest
// boot ever seen, every droplet would be listed from 27 s on for good.
func TestBootBucketListsFollowSlowerBoots(t *testing.T) {
	if testing.Short() {
		t.Skip("a minute and more of scaled boots")
	}
	const token = "dop_v1_boot-follow"
	do := fakedo.New(fakedo.Options{BootDelay: followFastBoot, RateLimits: fakedo.RateLimits{Disabled: true}})
	if err := do.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(do.Close)
	do.AddAccount(token, fakedo.AccountOptions{DropletLimit: 10000})
	client, err := digitalocean.NewClients(do.URL(), digitalocean.LimiterOptions{Disabled: true}).For(token)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var booting sync.WaitGroup
	t.Cleanup(func() { cancel(); booting.Wait() })

	tag := digitalocean.InstallationTag("boot-follow")
	boots := newBootTimes(followWindow)
	h := &handler{opts: Options{BootResync: followBootResync, BootWindow: followWindow}, boots: boots,
		lists: newListCache(ctx, tag, func([]int) {}, boots, nil)}
	var mu sync.Mutex
	var created []time.Time
	createFor := func(d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(followEvery) {
			mu.Lock()
			seq := len(created) + 1
			created = append(created, time.Now())
			mu.Unlock()
			bootTag := digitalocean.BootTag(tag, time.Now(), seq)
			g := do.CreateDropletOutOfBand(token, godo.DropletCreateRequest{Name: fmt.Sprintf("vm-%d", seq),
				Region: "nyc1", Size: "s-1vcpu-1gb", Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"},
				Tags: []string{tag, bootTag}})
			d := &v1alpha1.Droplet{}
			d.Status.DropletID, d.Status.BootTag, d.Status.CreatedAt = g.ID, bootTag, g.Created
			booting.Add(1)
			go func() {
				defer booting.Done()
				readUntilActive(ctx, h, client, d)
			}()
		}
	}
	// listsPerDroplet is the boot-bucket lists taken in [from, to) over the
	// droplets created then, at a steady pace: one droplet's lists.
	listsPerDroplet := func(from, to time.Time) float64 {
		lists := 0
		for _, r := range do.Requests() {
			if r.Pattern == fakedo.RouteListDroplets && !r.Time.Before(from) && r.Time.Before(to) {
				lists++
			}
		}
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, c := range created {
			if !c.Before(from) && c.Before(to) {
				n++
			}
		}
		return float64(lists) / float64(max(n, 1))
	}

	// 30 s boots: the first boots teach the shortest, then a steady state.
	start := time.Now()
	createFor(2*followFastBoot + 2*time.Second)
	fast := listsPerDroplet(start.Add(followFastBoot+time.Second), time.Now())

	// 60 s boots: until the window has passed, droplets are listed from 27 s
	// on, as they would be for good if the shortest boot only fell.
	do.SetTiming(fakedo.Timing{BootDelay: followSlowBoot, RateLimits: fakedo.RateLimits{Disabled: true}})
	slowFrom := time.Now()
	createFor(followWindow / 2)
	stuck := listsPerDroplet(slowFrom.Add(followFastBoot+followSlowBoot), time.Now())
	createFor(followWindow/2 + followSlowBoot)
	lateFrom := time.Now()
	createFor(2*followSlowBoot + 2*time.Second)
	late := listsPerDroplet(lateFrom, time.Now())
	learned, _ := boots.shortest(client)
	t.Logf("boot-bucket lists per droplet: %.1f at 30 s boots, %.1f at 60 s before the window passed, %.1f after (%.0f simulated minutes after the change); shortest boot %v (%v simulated)",
		fast, stuck, late, time.Since(slowFrom).Minutes()*followScale, learned, learned*followScale)
	if stuck < 2*fast {
		t.Fatalf("60 s boots with the shortest boot learned at 30 s cost %.1f lists per droplet, not clearly more than %.1f at 30 s boots: the test measures nothing", stuck, fast)
	}
	if late > 1.5*fast+1 || late > (fast+stuck)/2 {
		t.Errorf("after the window, 60 s boots cost %.1f lists per droplet, want about the %.1f of 30 s boots (%.1f while the shortest boot was 30 s's)", late, fast, stuck)
	}
}

// readUntilActive reads a booting droplet as refresh does: not before its
// boot could be over, then from its boot bucket's list each boot resync,
// until the list shows it active.
func readUntilActive(ctx context.Context, h *handler, client *godo.Client, d *v1alpha1.Droplet) {
	for ctx.Err() == nil {
		wait := h.opts.BootResync
		if until := h.beforeBootable(client, d); until > 0 {
			wait = until
		} else if got, err := h.read(ctx, client, d, h.opts.BootResync); err == nil && got != nil && got.Status == "active" {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
}
