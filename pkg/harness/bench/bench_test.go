package bench

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// These cover the pure parts only; the benchmark itself is a program
// (pkg/harness/bench/cmd), never run by go test.

func TestPercentileIsNearestRank(t *testing.T) {
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(i + 1)
	}
	for _, c := range []struct {
		xs   []float64
		p    float64
		want float64
	}{
		{hundred, 50, 50},
		{hundred, 95, 95},
		{hundred, 100, 100},
		{hundred, 0, 1},
		{[]float64{7}, 95, 7},
		{[]float64{1, 2, 3, 4}, 50, 2},
		{[]float64{1, 2, 3, 4}, 95, 4},
	} {
		if got := Percentile(c.xs, c.p); got != c.want {
			t.Errorf("Percentile(%v…, %g) = %g, want %g", c.xs[0], c.p, got, c.want)
		}
	}
	if !math.IsNaN(Percentile(nil, 50)) {
		t.Error("Percentile of nothing is not NaN")
	}
}

func TestSummarizeDoesNotReorderItsInput(t *testing.T) {
	xs := []float64{3, 1, 2}
	d := Summarize(xs)
	if d != (Dist{Count: 3, P50: 2, P95: 3, Max: 3}) {
		t.Errorf("Summarize = %+v", d)
	}
	if !slices.Equal(xs, []float64{3, 1, 2}) {
		t.Errorf("input reordered: %v", xs)
	}
	if Summarize(nil) != (Dist{}) {
		t.Error("Summarize(nil) is not the zero Dist")
	}
}

func TestFloorIsCreatesAtTheRateLimitPlusOneBoot(t *testing.T) {
	if got, want := Floor(1000), 4*time.Minute+BootDelay; got != want {
		t.Errorf("Floor(1000) = %v, want %v", got, want)
	}
	if got, want := Floor(100), 24*time.Second+BootDelay; got != want {
		t.Errorf("Floor(100) = %v, want %v", got, want)
	}
}

// passing is a pair of N=1000 results and an N=100 one that meet every target.
func passing() []Result {
	ours := Result{Mode: ModeOurs, N: 1000, Running: 1000, Wall: Num(Floor(1000).Seconds() * 1.1), Floor: Floor(1000).Seconds(),
		PerVMHour: 0.3, HoldSeconds: 3600, PeakRSSMiB: 90, DeleteIdle: Dist{Count: 10, P95: 1}, DeleteFlood: Dist{Count: 10, P95: 1.5},
		Overhead: Dist{Count: 1000, P95: 4}, DeleteAll: Dist{Count: 1000, P95: 12}, KeyScope: KeyScopeEnvironment,
		LifecycleRequests: map[string]int{"POST /v2/droplets": 102, "DELETE /v2/droplets": 1020}, LifecycleVMs: 1020, PerVMLifecycle: 1.1,
		EventEnd: EventEnd{VMs: 1000, Seconds: 20, PerVM: 0.03, LastRetired: 12,
			Requests: map[string]int{"POST /v2/tags": 10, "POST /v2/tags/{tag}/resources": 10, "DELETE /v2/droplets": 10}}}
	base := Result{Mode: ModeBaseline, N: 1000, Running: 1000, PerVMHour: 120, HoldSeconds: 3600, TooMany: 5000}
	small := Result{Mode: ModeOurs, N: 100, Running: 100, Overhead: Dist{Count: 100, P95: 1.5},
		DeleteIdle: Dist{Count: 10, P95: 1}, DeleteFlood: Dist{Count: 10, P95: 3}}
	return []Result{small, ours, base}
}

func statuses(targets []Target) string {
	var s []string
	for _, t := range targets {
		s = append(s, t.Status)
	}
	return strings.Join(s, " ")
}

func TestEvaluatePassesWhenEveryGoalIsMet(t *testing.T) {
	targets := Evaluate(passing())
	if got := statuses(targets); got != "PASS PASS PASS PASS PASS PASS PASS PASS PASS PASS PASS PASS" {
		t.Fatalf("statuses %s: %+v", got, targets)
	}
	if (&Report{Targets: targets}).Missed() {
		t.Error("Missed with all passing")
	}
}

func TestEvaluateFailsEachGoalOnItsOwn(t *testing.T) {
	for i, breakIt := range []func(rs []Result){
		func(rs []Result) { rs[1].PerVMHour = 6.01 }, // more than 1/20 of 120
		func(rs []Result) { rs[1].TooMany = 1 },
		func(rs []Result) { rs[0].Overhead.P95 = 2.01 },
		func(rs []Result) { rs[1].Wall = Num(rs[1].Floor * 1.21) },
		func(rs []Result) { rs[1].PeakRSSMiB = 151 },
		func(rs []Result) { rs[1].DeleteFlood.P95 = 2.01 },
		func(rs []Result) { rs[1].Overhead.P95 = 5.01 },
		func(rs []Result) { rs[1].DeleteAll.P95 = 15.01 },
		func(rs []Result) { rs[1].PerVMLifecycle = 1.51 },
		func(rs []Result) { rs[1].EventEnd.PerVM = 0.11 },
		func(rs []Result) { rs[1].EventEnd.KeysLeft = 1 },
		func(rs []Result) { rs[1].EventEnd.TagsLeft = 1 },
	} {
		rs := passing()
		breakIt(rs)
		targets := Evaluate(rs)
		for j, tg := range targets {
			want := Pass
			if j == i || i == 1 && j == 7 { // the event end counts 429s too
				want = Fail
			}
			if tg.Status != want {
				t.Errorf("breaking goal %d: %q is %s (%s), want %s", i, tg.Name, tg.Status, tg.Detail, want)
			}
		}
		if !(&Report{Targets: targets}).Missed() {
			t.Errorf("breaking goal %d: not Missed", i)
		}
	}
}

func TestEvaluateFailsWhenNotAllRanOrDeletesHung(t *testing.T) {
	rs := passing()
	rs[0].Running, rs[1].Running, rs[1].DeleteFloodMissing = 99, 999, 1
	got := statuses(Evaluate(rs))
	if got != "PASS PASS FAIL FAIL PASS FAIL FAIL PASS PASS PASS PASS PASS" {
		t.Errorf("statuses %s", got)
	}
}

func TestEvaluateFailsWhatAnAbortedScenarioFeeds(t *testing.T) {
	rs := passing()
	rs[2].Aborted = true // the baseline
	if got := statuses(Evaluate(rs)); got != "FAIL PASS PASS PASS PASS PASS PASS PASS PASS PASS PASS PASS" {
		t.Errorf("statuses %s", got)
	}
}

func TestEvaluateSkipsWhatWasNotRun(t *testing.T) {
	rs := passing()[:1] // ours at N=100 only: the delete check falls to it
	got := statuses(Evaluate(rs))
	if got != "SKIP SKIP PASS SKIP SKIP FAIL SKIP SKIP SKIP SKIP SKIP SKIP" {
		t.Errorf("statuses %s", got)
	}
	if (&Report{Targets: Evaluate(rs[:0])}).Missed() {
		t.Error("a skipped target counts as missed")
	}
}

func TestTablesShowModesSideBySideWithTheirRatio(t *testing.T) {
	rs := passing()
	rs[1].Requests = map[string]int{"GET /v2/droplets": 30}
	rs[2].Requests = map[string]int{"GET /v2/droplets/{id}": 120000, "GET /v2/droplets": 0}
	rs[1].KeyScope, rs[2].KeyScope = KeyScopeEnvironment, KeyScopeVM
	rs[1].HeldBack = Num(nan)
	var out bytes.Buffer
	for i := range rs {
		rs[i].FloodScale, rs[i].HoldScale = 1, 15
		if rs[i].N == 1000 {
			rs[i].FloodScale = 3
		}
	}
	WriteTables(&out, &Report{HoldScale: 15, FloodScales: map[int]float64{1000: 3, 100: 1}, HoldSeconds: 3600, Results: rs})
	text := out.String()
	for _, want := range []string{
		"flood phases (set up, probes, flood, all running) 1 at N=100, 3 at N=1000; hold, delete all and after 15",
		"N = 100 (rate-limit floor 0.90 min; scale: flood 1, hold 15)",
		"N = 1000 (rate-limit floor 4.50 min; scale: flood 3, hold 15)",
		"ours (keys: environment)",
		"baseline (keys: vm)",
		"ours/baseline",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("tables lack %q:\n%s", want, text)
		}
	}
	line := lineWith(t, text, "steady-state requests / VM-hour")
	if f := strings.Fields(line); f[len(f)-3] != "0.300" || f[len(f)-2] != "120.000" || f[len(f)-1] != "0.0025" {
		t.Errorf("per VM-hour line %q", line)
	}
	if f := strings.Fields(lineWith(t, text, "GET /v2/droplets/{id}")); f[len(f)-3] != "0" || f[len(f)-1] != "0" {
		t.Errorf("an endpoint only one mode used: %q", f)
	}
	if f := strings.Fields(lineWith(t, text, "held back by the client limiter")); f[len(f)-3] != "-" || f[len(f)-1] != "-" {
		t.Errorf("an unknown value is not shown as -: %q", f)
	}
}

// lineWith returns the last line containing s (the N=1000 table comes last).
func lineWith(t *testing.T, text, s string) string {
	t.Helper()
	lines := strings.Split(text, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], s) {
			return lines[i]
		}
	}
	t.Fatalf("no line with %q in:\n%s", s, text)
	return ""
}

func TestReportMarshalsUnknownsAsNull(t *testing.T) {
	data, err := json.Marshal(&Report{Results: []Result{{Wall: Num(nan), HeldBack: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	if s := string(data); !strings.Contains(s, `"wall":null`) || !strings.Contains(s, `"held_back":3`) {
		t.Errorf("JSON %s", s)
	}
}

func TestEventEndFailsOnAVMGoneBeforeItsDropletsDeleteOrAHungDelete(t *testing.T) {
	rs := passing()
	rs[1].GoneBeforeDelete = 1
	if tg := Evaluate(rs)[7]; tg.Status != Fail || !strings.Contains(tg.Detail, "1 VMs gone first") {
		t.Errorf("one VM gone first: %+v", tg)
	}
	rs = passing()
	rs[1].DeleteAllMissing = 3
	if tg := Evaluate(rs)[7]; tg.Status != Fail || !strings.Contains(tg.Detail, "3 droplets never went") {
		t.Errorf("hung deletes: %+v", tg)
	}
}

func TestLifecycleTargetSkipsWithoutTheEnvironmentKeyScope(t *testing.T) {
	rs := passing()
	rs[1].KeyScope = KeyScopeVM + " (environment rejected)"
	if tg := Evaluate(rs)[8]; tg.Status != Skip {
		t.Errorf("lifecycle target with vm keys: %+v", tg)
	}
}

func TestTablesShowLifecycleRequestsAndVMsGoneFirst(t *testing.T) {
	rs := passing()[1:2]
	rs[0].GoneBeforeDelete = 2
	var out bytes.Buffer
	WriteTables(&out, &Report{HoldScale: 15, FloodScales: map[int]float64{1000: 3}, Results: rs})
	text := out.String()
	if f := strings.Fields(lineWith(t, text, "DO requests per VM lifecycle")); f[len(f)-1] != "1.10" {
		t.Errorf("lifecycle row %q", f)
	}
	lifecycle, _, _ := strings.Cut(text, "event end:") // the event end lists its own requests by endpoint
	if f := strings.Fields(lineWith(t, lifecycle, "  DELETE /v2/droplets")); f[len(f)-1] != "1020" {
		t.Errorf("lifecycle by endpoint %q", f)
	}
	if f := strings.Fields(lineWith(t, text, "VMs gone from Kubernetes before DO took the delete")); f[len(f)-1] != "2" {
		t.Errorf("gone-first row %q", f)
	}
}

func TestSoldOutRunIsHeldToTheEventsGoals(t *testing.T) {
	good := Result{Mode: ModeOurs, N: targetN, Running: targetN, Region: "nyc3,sfo3", SellOut: &SellOut{Region: "nyc3", After: 400},
		ByRegion: map[string]int{"nyc3": 400, "sfo3": 620}, RefusedCreates: 7, Overhead: Dist{Count: targetN, P95: 4.1}}
	got := soldOutTargets(&good)
	if len(got) != 1 || got[0].Status != Pass || !strings.Contains(got[0].Detail, "7 creates refused; droplets by region nyc3 400, sfo3 620") {
		t.Fatalf("targets %+v, want one PASS reporting the refused creates and the regions", got)
	}
	for name, spoil := range map[string]func(r *Result){
		"a VM not running": func(r *Result) { r.Running-- },
		"a duplicate":      func(r *Result) { r.Duplicates = 1 },
		"a 429":            func(r *Result) { r.TooMany = 1 },
		"a slow p95":       func(r *Result) { r.Overhead.P95 = 5.5 },
	} {
		bad := good
		spoil(&bad)
		if got := soldOutTargets(&bad); got[0].Status != Fail {
			t.Errorf("%s: %s, want FAIL", name, got[0].Status)
		}
	}
	if got := soldOutTargets(&Result{Mode: ModeOurs, N: targetN}); got != nil {
		t.Errorf("a run without a sell-out got %v", got)
	}
}
