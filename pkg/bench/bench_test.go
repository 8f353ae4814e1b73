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
// (pkg/bench/cmd), never run by go test.

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
		PerVMHour: 0.3, HoldSeconds: 3600, PeakRSSMiB: 90, DeleteIdle: Dist{Count: 10, P95: 1}, DeleteFlood: Dist{Count: 10, P95: 1.5}}
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
	if got := statuses(targets); got != "PASS PASS PASS PASS PASS PASS" {
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
	} {
		rs := passing()
		breakIt(rs)
		targets := Evaluate(rs)
		for j, tg := range targets {
			want := Pass
			if j == i {
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
	if got != "PASS PASS FAIL FAIL PASS FAIL" {
		t.Errorf("statuses %s", got)
	}
}

func TestEvaluateFailsWhatAnAbortedScenarioFeeds(t *testing.T) {
	rs := passing()
	rs[2].Aborted = true // the baseline
	if got := statuses(Evaluate(rs)); got != "FAIL PASS PASS PASS PASS PASS" {
		t.Errorf("statuses %s", got)
	}
}

func TestEvaluateSkipsWhatWasNotRun(t *testing.T) {
	rs := passing()[:1] // ours at N=100 only: the delete check falls to it
	got := statuses(Evaluate(rs))
	if got != "SKIP SKIP PASS SKIP SKIP FAIL" {
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
	WriteTables(&out, &Report{Scale: 10, HoldSeconds: 3600, Results: rs})
	text := out.String()
	for _, want := range []string{
		"N = 100 (rate-limit floor 0.90 min)",
		"N = 1000 (rate-limit floor 4.50 min)",
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

func TestControllerArgsScaleEveryPeriodAndLimit(t *testing.T) {
	c := &Config{Scale: 10}
	ours := strings.Join(c.controllerArgs(ModeOurs, "ns", "/kc", "http://127.0.0.1:1/", 9000, nil), " ")
	for _, want := range []string{"--active-resync=6s", "--boot-resync=500ms", "--rate-limits=250/6s,5000/6m",
		"--resync-mode=batched", "--kube-qps=500", "--kube-burst=1000", "--sweep-interval=1m", "--metrics-addr=127.0.0.1:9000"} {
		if !strings.Contains(ours, want) {
			t.Errorf("ours lacks %s: %s", want, ours)
		}
	}
	base := strings.Join(c.controllerArgs(ModeBaseline, "ns", "/kc", "u", 9000, map[string]bool{"--kube-burst": true}), " ")
	for _, want := range []string{"--active-resync=3s", "--resync-mode=per-droplet", "--rate-limiter=false"} {
		if !strings.Contains(base, want) {
			t.Errorf("baseline lacks %s: %s", want, base)
		}
	}
	if strings.Contains(base, "--kube-burst") || strings.Contains(base, "--rate-limits") {
		t.Errorf("baseline has a missing or ours-only flag: %s", base)
	}
}

func TestCompactDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		6 * time.Second: "6s", 6 * time.Minute: "6m", time.Hour: "1h", 90 * time.Minute: "1h30m",
		500 * time.Millisecond: "500ms", 61 * time.Second: "1m1s", 5 * time.Second / 12: "417ms",
	} {
		if got := compactDuration(d); got != want {
			t.Errorf("compactDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestParseStatCPUCountsPastTheCommandName(t *testing.T) {
	// The command name may hold spaces and parentheses; utime 250, stime 50 ticks.
	stat := "4242 (hf (do) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 9 0 12345 1000 200"
	got, err := parseStatCPU(stat)
	if err != nil || got != 3 {
		t.Errorf("parseStatCPU = %g, %v; want 3", got, err)
	}
	if _, err := parseStatCPU("garbage"); err == nil {
		t.Error("no error for a malformed stat")
	}
}

func TestSumSeriesAddsOnlyThatMetric(t *testing.T) {
	text := `# HELP hf_do_requests_held_back_total x
hf_do_requests_held_back_total{priority="create",token_hash="a"} 3
hf_do_requests_held_back_total{priority="resync",token_hash="a"} 4.5
hf_do_requests_held_back_total_other 100
`
	if got := sumSeries(text, "hf_do_requests_held_back_total"); got != 7.5 {
		t.Errorf("sumSeries = %g", got)
	}
	if !math.IsNaN(sumSeries(text, "absent")) {
		t.Error("an absent metric is not NaN")
	}
}

func TestByEndpointFoldsStatuses(t *testing.T) {
	counts := map[string]int{"GET /v2/droplets 200": 3, "GET /v2/droplets 429": 2, "POST /v2/droplets 202": 1, "POST /v2/droplets dropped": 1}
	got := byEndpoint(counts)
	if got["GET /v2/droplets"] != 5 || got["POST /v2/droplets"] != 2 || len(got) != 2 {
		t.Errorf("byEndpoint = %v", got)
	}
	if tooMany(counts) != 2 {
		t.Errorf("tooMany = %d", tooMany(counts))
	}
}

func TestKubeRequestTotalsByVerbAndResource(t *testing.T) {
	text := `# TYPE apiserver_request_total counter
apiserver_request_total{code="201",component="apiserver",dry_run="",group="hobbyfarm.io",resource="virtualmachines",scope="resource",subresource="",verb="POST",version="v1"} 1000
apiserver_request_total{code="409",component="apiserver",dry_run="",group="hobbyfarm.io",resource="virtualmachines",scope="resource",subresource="status",verb="PUT",version="v1"} 5
apiserver_request_total{code="200",component="apiserver",dry_run="",group="hobbyfarm.io",resource="virtualmachines",scope="resource",subresource="status",verb="PUT",version="v1"} 995
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="secrets",scope="namespace",subresource="",verb="LIST",version="v1"} 3
apiserver_request_duration_seconds_count{verb="POST",resource="secrets"} 7
`
	got, err := parseRequestTotals(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"POST virtualmachines": 1000, "PUT virtualmachines": 1000, "LIST secrets": 3}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %g, want %g", k, got[k], v)
		}
	}
	if !isWrite("PUT virtualmachines") || isWrite("LIST secrets") || isWrite("WATCH secrets") {
		t.Error("isWrite")
	}
	d := diffCounts(map[string]float64{"a": 1, "b": 2}, map[string]float64{"a": 1, "b": 5, "c": 1})
	if len(d) != 2 || d["b"] != 3 || d["c"] != 1 {
		t.Errorf("diffCounts = %v", d)
	}
}
