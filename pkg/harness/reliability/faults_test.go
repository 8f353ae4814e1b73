package reliability

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
)

const stormLength = 4 * time.Second

// TestFiftyVMsUnderFaults provisions and deletes 50 VMs while DigitalOcean
// fails 20% of requests with a 5xx (not applied), applies 5% and then drops
// the answer (the lost create), adds 0–300 ms latency to everything and, for
// a few seconds in the middle, answers every request with 429.
//
// Invariants: DigitalOcean never holds two droplets for one VM (sampled all
// along, and counted exactly from the applied creates), every VM runs, and
// after the deletes nothing is left in DigitalOcean or the namespace. Once the
// storm is over the controller stays within the (scaled) rate limit.
func TestFiftyVMsUnderFaults(t *testing.T) {
	const n = 50
	w := newWorld(t, worldOptions{
		fake: fakedo.Options{
			BootDelay: time.Second,
			Seed:      20240611,
		},
		bootResync: time.Second,
	})
	faults := fakedo.FaultRule{
		ErrorRate:              0.20,
		ErrorStatus:            http.StatusServiceUnavailable,
		DropResponseAfterApply: 0.05,
		LatencyJitter:          300 * time.Millisecond,
	}
	w.do.SetFaults(fakedo.Faults{Rules: map[string]fakedo.FaultRule{fakedo.AnyRoute: faults}})
	dups := w.watchDuplicates(100 * time.Millisecond)

	start := time.Now()
	env := w.standardEnv("faulty")
	names := w.createVMs(env, "f", n)

	// The storm hits while keys and droplets are being created.
	stormStart := time.Now()
	storm := faults
	storm.Force429Until = stormStart.Add(stormLength)
	w.do.SetFaults(fakedo.Faults{Rules: map[string]fakedo.FaultRule{fakedo.AnyRoute: storm}})
	stormEnd := storm.Force429Until

	w.waitRunning(150*time.Second, names...)
	provisioned := time.Since(start)

	live := w.liveDroplets()
	if len(live) != n {
		t.Errorf("DigitalOcean holds %d droplets with all %d VMs running, want %d", len(live), n, n)
	}
	byVM := perVM(live)
	if len(byVM) != n {
		t.Errorf("%d distinct VM names among the droplets, want %d", len(byVM), n)
	}
	for vm, ids := range byVM {
		if len(ids) != 1 {
			t.Errorf("%s served by droplets %v", vm, ids)
		}
	}
	if d, k := w.appliedCreates(); d != n || k != n {
		t.Errorf("DigitalOcean applied %d droplet creates and %d key creates, want exactly %d each", d, k, n)
	}

	deleteStart := time.Now()
	w.deleteVMs(names...)
	w.waitAllGone(150 * time.Second)
	deleted := time.Since(deleteStart)
	dups.halt()
	dups.check(t)
	if d, k := w.appliedCreates(); d != n || k != n {
		t.Errorf("after the deletes DigitalOcean had applied %d droplet creates and %d key creates, want %d each", d, k, n)
	}

	var total, inStorm, after, dropped, injected int
	var afterDetail []string
	for _, r := range w.do.Requests() {
		if r.Dropped {
			dropped++
		}
		if r.Status == http.StatusServiceUnavailable {
			injected++
		}
		if r.Status != http.StatusTooManyRequests {
			continue
		}
		total++
		switch {
		case !r.Time.After(stormEnd):
			inStorm++
		default:
			after++
			afterDetail = append(afterDetail, fmt.Sprintf("%s at storm+%v", r.Pattern, r.Time.Sub(stormEnd).Round(time.Millisecond)))
		}
	}
	t.Logf("provisioned %d VMs in %v, deleted them in %v; %d requests, %d injected 503s, %d dropped answers",
		n, provisioned.Round(time.Millisecond), deleted.Round(time.Millisecond), len(w.do.Requests()), injected, dropped)
	t.Logf("429s: %d in all, %d during the %v storm, %d after it (limit %d per %v)", total, inStorm, stormLength, after, ratePerWindow, rateWindow)
	peak, peakAt := peakWindow(w.do.Requests(), rateWindow)
	t.Logf("busiest %v: %d requests, at start+%v", rateWindow, peak, peakAt.Sub(start).Round(time.Millisecond))
	t.Logf("request counts:%s", counts(w.do.RequestCounts()))
	if inStorm == 0 {
		t.Error("the storm produced no 429: it missed the provisioning")
	}
	// Zero: the controller's own pace (one poll per booting droplet per
	// second, creates spread by backoff) stays far below 250 per 10 s, and
	// after a 429 it holds back every request of that token until the
	// Retry-After has passed, so the storm's requests do not use up the
	// window that follows it either.
	if after > 0 {
		t.Errorf("%d requests rate-limited after the storm ended: %v", after, first(afterDetail, 10))
	}
}

// peakWindow is the most requests that arrived in any window of length d,
// and when that window ended.
func peakWindow(records []fakedo.RequestRecord, d time.Duration) (int, time.Time) {
	var admitted []time.Time
	for _, r := range records {
		admitted = append(admitted, r.Time)
	}
	slices.SortFunc(admitted, time.Time.Compare)
	peak, at, lo := 0, time.Time{}, 0
	for hi, t := range admitted {
		for admitted[lo].Before(t.Add(-d)) {
			lo++
		}
		if n := hi - lo + 1; n > peak {
			peak, at = n, t
		}
	}
	return peak, at
}
