package droplet

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
)

const fleetToken = "dop_v1_fleet-test"

// newFleetWorld is a fake holding n droplets with the installation tag and
// one without, and a listCache listing them.
func newFleetWorld(t *testing.T, n int) (*fakedo.Server, *godo.Client, *listCache, []int, *[][]int) {
	t.Helper()
	do := fakedo.New(fakedo.Options{BootDelay: fakedo.NoDelay, RateLimits: fakedo.RateLimits{Disabled: true}})
	if err := do.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(do.Close)
	do.AddAccount(fleetToken, fakedo.AccountOptions{DropletLimit: n + 10})
	tag := digitalocean.InstallationTag("fleet-test")
	var ids []int
	for i := 0; i < n; i++ {
		ids = append(ids, do.CreateDropletOutOfBand(fleetToken, godo.DropletCreateRequest{
			Name: fmt.Sprintf("vm-%d", i), Region: "nyc1", Size: "s-1vcpu-1gb",
			Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}, Tags: []string{tag}}).ID)
	}
	do.CreateDropletOutOfBand(fleetToken, godo.DropletCreateRequest{Name: "not-ours", Region: "nyc1",
		Size: "s-1vcpu-1gb", Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}})
	client, err := digitalocean.NewClients(do.URL(), digitalocean.LimiterOptions{Disabled: true}).For(fleetToken)
	if err != nil {
		t.Fatal(err)
	}
	var changes [][]int
	f := newListCache(context.Background(), tag, func(ids []int) { changes = append(changes, ids) }, nil, nil)
	return do, client, f, ids, &changes
}

func TestFleetListsAllPagesOncePerPeriod(t *testing.T) {
	do, client, f, ids, _ := newFleetWorld(t, 450)
	for _, id := range ids {
		d, err := f.get(client, id, time.Hour, time.Time{}, "")
		if err != nil || d == nil || d.ID != id {
			t.Fatalf("droplet %d: %v, %v", id, d, err)
		}
	}
	counts := do.RequestCounts()
	if n := counts[fakedo.RouteListDroplets+" 200"]; n != 3 {
		t.Errorf("450 droplets read with %d list requests, want 3 pages of 200", n)
	}
	if n := counts[fakedo.RouteGetDroplet+" 200"]; n != 0 {
		t.Errorf("%d single GETs, want none", n)
	}
	// Older than the period asked for: listed again, once.
	if _, err := f.get(client, ids[0], 0, time.Time{}, ""); err != nil {
		t.Fatal(err)
	}
	if n := do.RequestCounts()[fakedo.RouteListDroplets+" 200"]; n != 6 {
		t.Errorf("after a stale read: %d list requests, want 6", n)
	}
}

func TestFleetReportsChangedAndMissingDroplets(t *testing.T) {
	do, client, f, ids, changes := newFleetWorld(t, 5)
	if _, err := f.get(client, ids[0], time.Hour, time.Time{}, ""); err != nil {
		t.Fatal(err)
	}
	if len(*changes) != 0 {
		t.Errorf("the first list reported changes: %v", *changes)
	}
	if err := do.SetDropletPublicIP(fleetToken, ids[1], "127.100.7.7"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Droplets.Delete(context.Background(), ids[2]); err != nil {
		t.Fatal(err)
	}
	d, err := f.get(client, ids[1], 0, time.Time{}, "")
	if err != nil {
		t.Fatal(err)
	}
	if ip, _ := d.PublicIPv4(); ip != "127.100.7.7" {
		t.Errorf("listed IP %q, want the changed 127.100.7.7", ip)
	}
	if len(*changes) != 1 {
		t.Fatalf("changes reported %d times, want once per list: %v", len(*changes), *changes)
	}
	got := slices.Sorted(slices.Values((*changes)[0]))
	if want := []int{ids[1], ids[2]}; !slices.Equal(got, want) {
		t.Errorf("changed ids %v, want the one with a new IP and the deleted one %v", got, want)
	}
	// A droplet the list lacks comes back nil, for the caller to GET.
	if d, err := f.get(client, ids[2], time.Hour, time.Time{}, ""); err != nil || d != nil {
		t.Errorf("deleted droplet: %v, %v; want nil, nil", d, err)
	}
}

func TestChangedIDsSeesNewDroplets(t *testing.T) {
	a := &godo.Droplet{ID: 1, Status: "new"}
	before := &dropletList{droplets: listedAll(map[int]*godo.Droplet{1: a})}
	after := &dropletList{droplets: listedAll(map[int]*godo.Droplet{1: {ID: 1, Status: "new"}, 2: {ID: 2, Status: "new"}})}
	if got := changedIDs(before, after); !slices.Equal(got, []int{2}) {
		t.Errorf("changedIDs = %v, want [2]", got)
	}
	after.droplets[1].status = "active"
	if got := slices.Sorted(slices.Values(changedIDs(before, after))); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("changedIDs after a status change = %v, want [1 2]", got)
	}
}

func TestFleetRelistsForADropletNewerThanTheList(t *testing.T) {
	do, client, f, ids, _ := newFleetWorld(t, 3)
	if _, err := f.get(client, ids[0], time.Hour, time.Time{}, ""); err != nil {
		t.Fatal(err)
	}
	newID := do.CreateDropletOutOfBand(fleetToken, godo.DropletCreateRequest{Name: "new", Region: "nyc1",
		Size: "s-1vcpu-1gb", Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}, Tags: []string{f.tag}}).ID
	// The list is fresh for maxAge, but older than the droplet: listed again.
	d, err := f.get(client, newID, time.Hour, time.Now(), "")
	if err != nil || d == nil || d.ID != newID {
		t.Fatalf("new droplet: %v, %v; want it from a new list", d, err)
	}
	if n := do.RequestCounts()[fakedo.RouteListDroplets+" 200"]; n != 2 {
		t.Errorf("%d list requests, want 2: one more for the new droplet", n)
	}
	// Others are served by that list: no more requests.
	if _, err := f.get(client, ids[1], time.Hour, time.Now().Add(-time.Minute), ""); err != nil {
		t.Fatal(err)
	}
	if n := len(do.RequestCounts()); n != 1 {
		t.Errorf("requests %v, want list requests only", do.RequestCounts())
	}
}

// A booting droplet is read from its boot bucket's list: one page for the
// few droplets created with it, however large the fleet.
func TestBootingDropletIsReadFromItsBucket(t *testing.T) {
	do, client, f, _, _ := newFleetWorld(t, 450)
	boot := digitalocean.BootTag(f.tag, time.Now(), 1)
	var booting []int
	for i := range 3 {
		booting = append(booting, do.CreateDropletOutOfBand(fleetToken, godo.DropletCreateRequest{
			Name: fmt.Sprintf("new-%d", i), Region: "nyc1", Size: "s-1vcpu-1gb",
			Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}, Tags: []string{f.tag, boot}}).ID)
	}
	for _, id := range booting {
		d, err := f.get(client, id, time.Hour, time.Time{}, boot)
		if err != nil || d == nil || d.ID != id {
			t.Fatalf("droplet %d: %v, %v", id, d, err)
		}
	}
	if n := do.RequestCounts()[fakedo.RouteListDroplets+" 200"]; n != 1 {
		t.Errorf("3 booting droplets among 453 read with %d list requests, want 1", n)
	}
}

// Once active, a droplet read from its boot bucket goes back to the
// installation's list, which may be older: the boot list's newer view wins.
func TestActiveDropletKeepsItsBootListsNewerView(t *testing.T) {
	do, client, f, _, _ := newFleetWorld(t, 2)
	boot := digitalocean.BootTag(f.tag, time.Now(), 1)
	id := do.CreateDropletOutOfBand(fleetToken, godo.DropletCreateRequest{Name: "new", Region: "nyc1",
		Size: "s-1vcpu-1gb", Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}, Tags: []string{f.tag, boot}}).ID
	if _, err := f.get(client, id, time.Hour, time.Time{}, ""); err != nil {
		t.Fatal(err)
	}
	if err := do.SetDropletStatus(fleetToken, id, "off"); err != nil {
		t.Fatal(err)
	}
	if d, err := f.get(client, id, 0, time.Time{}, boot); err != nil || d.Status != "off" {
		t.Fatalf("boot list: %v, %v", d, err)
	}
	d, err := f.get(client, id, time.Hour, time.Time{}, "", boot)
	if err != nil || d.Status != "off" {
		t.Errorf("installation list read after the boot list: status %q (%v), want the newer off", d.Status, err)
	}
}

// tightClient is a client whose limiter lets one resync and two creates
// through per hour.
func tightClient(t *testing.T, do *fakedo.Server) *godo.Client {
	t.Helper()
	limits := digitalocean.LimiterOptions{Limits: []digitalocean.RateLimit{{Requests: 2, Window: time.Hour}}, Headroom: 0.01}
	client, err := digitalocean.NewClients(do.URL(), limits).For(fleetToken)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// A list the limiter holds back leaves the last one in use: every list the
// budget allows serves all the Droplets that ask after it.
func TestHeldBackListServesTheLastOne(t *testing.T) {
	do, _, f, ids, _ := newFleetWorld(t, 3)
	client := tightClient(t, do)
	if _, err := f.get(client, ids[0], 0, time.Time{}, ""); err != nil {
		t.Fatal(err)
	}
	d, err := f.get(client, ids[1], 0, time.Time{}, "")
	if err != nil || d == nil || d.ID != ids[1] {
		t.Fatalf("with the next list held back: %v, %v; want the last list's droplet", d, err)
	}
	if _, err := f.get(client, ids[1], 0, time.Now().Add(time.Minute), ""); !digitalocean.IsHeldBack(err) {
		t.Errorf("a list older than the droplet was used while a new one was held back: %v", err)
	}
}

// A droplet just seen active in its boot bucket's list is read from that
// list while the installation's list is older or held back.
func TestActiveDropletIsServedByItsBootList(t *testing.T) {
	do, _, f, _, _ := newFleetWorld(t, 2)
	client := tightClient(t, do)
	boot := digitalocean.BootTag(f.tag, time.Now(), 1)
	id := do.CreateDropletOutOfBand(fleetToken, godo.DropletCreateRequest{Name: "new", Region: "nyc1",
		Size: "s-1vcpu-1gb", Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}, Tags: []string{f.tag, boot}}).ID
	if _, err := f.get(client, id, time.Hour, time.Time{}, boot); err != nil {
		t.Fatal(err)
	}
	// The resync budget (one request) is spent: the installation list is held back.
	if _, err := f.get(client, 400, 0, time.Time{}, ""); !digitalocean.IsHeldBack(err) {
		t.Fatalf("installation list not held back: %v", err)
	}
	d, err := f.get(client, id, time.Hour, time.Time{}, "", boot)
	if err != nil || d == nil || d.ID != id {
		t.Errorf("active droplet with its boot list at hand: %v, %v", d, err)
	}
}

// A boot bucket's list nearly a period old is taken again only while the
// token's budget has room to spare; the installation's list is not.
func TestNearlyStaleBootListIsRelistedOnlyWithRoomToSpare(t *testing.T) {
	do, client, f, ids, _ := newFleetWorld(t, 1)
	boot := digitalocean.BootTag(f.tag, time.Now(), 1)
	id := do.CreateDropletOutOfBand(fleetToken, godo.DropletCreateRequest{Name: "new", Region: "nyc1",
		Size: "s-1vcpu-1gb", Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}, Tags: []string{f.tag, boot}}).ID
	lists := func() int { return do.RequestCounts()[fakedo.RouteListDroplets+" 200"] }
	var wait time.Duration
	f.room = func(*godo.Client, digitalocean.Priority) time.Duration { return wait }
	age := func(tag string) {
		f.mu.Lock()
		f.byList[f.key(client, tag)].taken = time.Now().Add(-950 * time.Millisecond)
		f.mu.Unlock()
	}
	for _, tag := range []string{boot, ""} {
		if _, err := f.get(client, id, time.Second, time.Time{}, tag); err != nil {
			t.Fatal(err)
		}
	}

	wait = time.Minute // a flood's creates fill the budget
	age(boot)
	before := lists()
	if _, err := f.get(client, id, time.Second, time.Time{}, boot); err != nil {
		t.Fatal(err)
	}
	if n := lists() - before; n != 0 {
		t.Errorf("nearly stale boot list with no room to spare: %d new lists, want 0", n)
	}

	wait = 0
	age(boot)
	before = lists()
	if _, err := f.get(client, id, time.Second, time.Time{}, boot); err != nil {
		t.Fatal(err)
	}
	if n := lists() - before; n != 1 {
		t.Errorf("nearly stale boot list with room to spare: %d new lists, want 1", n)
	}

	age("")
	before = lists()
	if _, err := f.get(client, ids[0], time.Second, time.Time{}, ""); err != nil {
		t.Fatal(err)
	}
	if n := lists() - before; n != 0 {
		t.Errorf("nearly stale installation list: %d new lists, want 0 (active droplets can wait)", n)
	}
}

// DigitalOcean pages by offset: droplets deleted between two page requests
// move the next page's first droplets onto the page already read. Those are
// not taken for gone, nor asked for one by one; a droplet the next list
// lacks too is.
func TestDropletsSkippedByShiftingPagesAreNotAskedForOneByOne(t *testing.T) {
	do, client, f, ids, changes := newFleetWorld(t, 450)
	if _, err := f.get(client, ids[0], time.Hour, time.Time{}, ""); err != nil {
		t.Fatal(err)
	}
	hold := do.HoldAfterApply(fakedo.RouteListDroplets)
	listed := make(chan error, 1)
	go func() {
		_, err := f.get(client, ids[0], 0, time.Time{}, "")
		listed <- err
	}()
	<-hold.Reached()
	for _, id := range ids[:50] { // the first page is read already
		if _, err := client.Droplets.Delete(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	hold.Release()
	if err := <-listed; err != nil {
		t.Fatal(err)
	}
	for _, id := range ids[50:] {
		if d, err := f.get(client, id, time.Hour, time.Time{}, ""); err != nil || d == nil {
			t.Fatalf("droplet %d, never deleted: %v, %v; want it as listed before", id, d, err)
		}
	}
	if len(*changes) != 1 || len((*changes)[0]) != 0 {
		t.Errorf("changes %v after the shifted list, want one report of none", *changes)
	}

	// Listed twice more: the deleted droplets are lacked twice in a row.
	for range 2 {
		if _, err := f.get(client, ids[60], 0, time.Time{}, ""); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids[:50] {
		if d, err := f.get(client, id, time.Hour, time.Time{}, ""); err != nil || d != nil {
			t.Fatalf("deleted droplet %d after two lists: %v, %v; want nil, nil", id, d, err)
		}
	}
	for _, id := range ids[50:] {
		if d, err := f.get(client, id, time.Hour, time.Time{}, ""); err != nil || d == nil {
			t.Fatalf("droplet %d after two lists: %v, %v", id, d, err)
		}
	}
}
