package bench

import (
	"bytes"
	"maps"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
)

func TestEventEndRequestsRunFromTheFirstDeleteToTheLastVMGone(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	rec := func(ms int, pattern string, status int) fakedo.RequestRecord {
		return fakedo.RequestRecord{Time: at(ms), Pattern: pattern, Status: status}
	}
	records := []fakedo.RequestRecord{
		rec(-1, fakedo.RouteDeleteKey, 204), // a retirement just before the first delete
		rec(0, fakedo.RouteCreateTag, 201),  // the first delete's moment counts
		rec(5, fakedo.RouteTagResources, 204),
		rec(6, fakedo.RouteDeleteDropletsByTag, 204),
		rec(7, fakedo.RouteListDroplets, 429),
		rec(8, fakedo.RouteDeleteKey, 204),     // a deleted VM's key: on its own line
		rec(9, fakedo.RouteDeleteTag, 204),     // the tag tidy: on its own line
		rec(10, fakedo.RouteListDroplets, 200), // the last VM's moment counts
		rec(11, fakedo.RouteGetDroplet, 404),   // after the last VM left
	}
	c := eventEndRequests(records, at(0), at(10))
	want := map[string]int{fakedo.RouteCreateTag: 1, fakedo.RouteTagResources: 1, fakedo.RouteDeleteDropletsByTag: 1, fakedo.RouteListDroplets: 2}
	if !maps.Equal(c.byEndpoint, want) || c.tooMany != 1 || c.total() != 5 {
		t.Errorf("window counts %v (%d 429s), want %v (1)", c.byEndpoint, c.tooMany, want)
	}
	if n := keyDeletesBeforeDroplets(records, at(0)); n != 0 {
		t.Errorf("%d key deletes before the last droplet delete, want 0 (the retirement before the window is not the event end's)", n)
	}
	records = append(records, rec(12, fakedo.RouteDeleteDroplet, 204))
	if n := keyDeletesBeforeDroplets(records, at(0)); n != 1 {
		t.Errorf("%d key deletes before a later droplet delete, want 1", n)
	}
}

func TestLastVanishedCountsVMsStillInKubernetes(t *testing.T) {
	t0 := time.Now()
	last, notGone := lastVanished([]vmTimes{{vanished: t0.Add(2 * time.Second)}, {vanished: t0.Add(5 * time.Second)}, {}, {vanished: t0}})
	if !last.Equal(t0.Add(5*time.Second)) || notGone != 1 {
		t.Errorf("last %v after t0, %d not gone; want 5s, 1", last.Sub(t0), notGone)
	}
}

func TestVMKeysLeaveTheSharedKeyOut(t *testing.T) {
	keys := []godo.Key{{Name: "hobbyfarm-ns-hfdo-env-bench"}, {Name: "hobbyfarm-ns-vm-00001"}, {Name: "hobbyfarm-ns-probe-00001"}}
	if got := vmKeys(keys, "hobbyfarm-ns-hfdo-env-bench"); got != 2 {
		t.Errorf("vmKeys = %d, want 2", got)
	}
	if got := vmKeys(nil, "x"); got != 0 {
		t.Errorf("vmKeys of none = %d", got)
	}
}

func TestLastKeyDeleteIsTheHoldsLastAcceptedOne(t *testing.T) {
	t0 := time.Now()
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	sim := func(a, b time.Time) float64 { return 15 * b.Sub(a).Seconds() }
	records := []fakedo.RequestRecord{
		{Time: at(-1), Pattern: fakedo.RouteDeleteKey, Status: 204}, // before the restart
		{Time: at(4), Pattern: fakedo.RouteDeleteKey, Status: 204},
		{Time: at(8), Pattern: fakedo.RouteDeleteKey, Status: 429},     // not accepted
		{Time: at(9), Pattern: fakedo.RouteDeleteDroplet, Status: 204}, // not a key
		{Time: at(20), Pattern: fakedo.RouteDeleteKey, Status: 204},    // the event end's
	}
	if got := float64(lastKeyDelete(records, at(0), at(20), sim)); got != 1 { // 4 s at scale 15
		t.Errorf("last key delete %g min, want 1", got)
	}
	if got := float64(lastKeyDelete(records[:1], at(0), at(20), sim)); !math.IsNaN(got) {
		t.Errorf("no key delete in the hold: %g, want NaN", got)
	}
}

func TestEventEndTargetsPassAndFailEachOnItsOwn(t *testing.T) {
	ours := &passing()[1]
	targets := eventEndTargets(ours)
	if got := statuses(targets); got != "PASS PASS" {
		t.Fatalf("statuses %s: %+v", got, targets)
	}
	for _, want := range []string{"0.030 (30 requests for 1000 VMs", "DELETE /v2/droplets×10", "POST /v2/tags×10"} {
		if !strings.Contains(targets[0].Detail, want) {
			t.Errorf("requests detail %q lacks %q", targets[0].Detail, want)
		}
	}
	for _, c := range []struct {
		name   string
		breaks func(e *EventEnd)
		want   string
	}{
		{"more than 0.1 per VM", func(e *EventEnd) { e.PerVM = 0.101 }, "FAIL PASS"},
		{"a key left", func(e *EventEnd) { e.KeysLeft = 1 }, "PASS FAIL"},
		{"a key deleted before a droplet", func(e *EventEnd) { e.KeyDeletesFirst = 1 }, "PASS FAIL"},
		{"a droplet left", func(e *EventEnd) { e.DropletsLeft = 1 }, "PASS FAIL"},
		{"a VM still in Kubernetes", func(e *EventEnd) { e.NotGone = 1 }, "FAIL FAIL"},
		{"not measured", func(e *EventEnd) { *e = EventEnd{PerVM: Num(nan)} }, "FAIL FAIL"},
	} {
		r := passing()[1]
		c.breaks(&r.EventEnd)
		if got := statuses(eventEndTargets(&r)); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	if got := statuses(eventEndTargets(nil)); got != "SKIP SKIP" {
		t.Errorf("not run: %s", got)
	}
}

func TestTablesShowTheEventEnd(t *testing.T) {
	rs := passing()[1:2]
	rs[0].EventEnd.KeysAtStart, rs[0].EventEnd.DropletsLeft = 7, 2
	var out bytes.Buffer
	WriteTables(&out, &Report{HoldScale: 15, FloodScales: map[int]float64{1000: 1}, Results: rs})
	text := out.String()
	_, eventEnd, _ := strings.Cut(text, "VM keys at DO when the deletes began")
	for _, c := range []struct{ row, want string }{
		{"VM keys at DO when the deletes began", "7"},
		{"last key delete in the hold (min after the restart)", "12.0"},
		{"DO requests per deleted VM", "0.030"},
		{"  POST /v2/tags/{tag}/resources", "10"},
		{"droplets left at DO after the event end", "2"},
	} {
		if f := strings.Fields(lineWith(t, "VM keys at DO when the deletes began"+eventEnd, c.row)); f[len(f)-1] != c.want {
			t.Errorf("row %q: %q, want %s", c.row, f, c.want)
		}
	}
}
