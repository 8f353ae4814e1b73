package bench

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	if got := statuses(targets); got != "PASS PASS PASS PASS PASS PASS PASS PASS PASS PASS PASS" {
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
	if got != "PASS PASS FAIL FAIL PASS FAIL FAIL PASS PASS PASS PASS" {
		t.Errorf("statuses %s", got)
	}
}

func TestEvaluateFailsWhatAnAbortedScenarioFeeds(t *testing.T) {
	rs := passing()
	rs[2].Aborted = true // the baseline
	if got := statuses(Evaluate(rs)); got != "FAIL PASS PASS PASS PASS PASS PASS PASS PASS PASS PASS" {
		t.Errorf("statuses %s", got)
	}
}

func TestEvaluateSkipsWhatWasNotRun(t *testing.T) {
	rs := passing()[:1] // ours at N=100 only: the delete check falls to it
	got := statuses(Evaluate(rs))
	if got != "SKIP SKIP PASS SKIP SKIP FAIL SKIP SKIP SKIP SKIP SKIP" {
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

func TestControllerArgsScaleEveryPeriodAndLimit(t *testing.T) {
	c := &Config{Scale: 15}
	ours := strings.Join(c.controllerArgs(10, ModeOurs, "ns", "/kc", "http://127.0.0.1:1/", 9000, nil), " ")
	for _, want := range []string{"--leader-elect=false", "--active-resync=6s", "--boot-resync=100ms", "--rate-limits=250/6s,5000/6m",
		"--resync-mode=batched", "--sweep-interval=1m", "--metrics-addr=127.0.0.1:9000",
		"--orphan-grace=10m"} {
		if !strings.Contains(ours, want) {
			t.Errorf("ours lacks %s: %s", want, ours)
		}
	}
	if strings.Contains(ours, "--kube-qps") {
		t.Errorf("ours is given a Kubernetes client limit; the benchmark measures the default, none: %s", ours)
	}
	// The flood's controller at scale 1 runs on DigitalOcean's own clock.
	real := strings.Join(c.controllerArgs(1, ModeOurs, "ns", "/kc", "u", 9000, nil), " ")
	for _, want := range []string{"--active-resync=1m", "--boot-resync=1s", "--rate-limits=250/1m,5000/1h",
		"--sweep-interval=10m"} {
		if !strings.Contains(real, want) {
			t.Errorf("ours at scale 1 lacks %s: %s", want, real)
		}
	}
	base := strings.Join(c.controllerArgs(10, ModeBaseline, "ns", "/kc", "u", 9000, map[string]bool{"--kube-burst": true}), " ")
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

// The baseline keeps its own flood scale where one is given, ours never.
func TestBaselineFloodScale(t *testing.T) {
	c := Config{Scale: 15, FloodScale: map[int]float64{1000: 1}, BaselineFloodScale: map[int]float64{1000: 3}}
	if got := c.FloodScaleOf(ModeBaseline, 1000); got != 3 {
		t.Errorf("baseline at 1000: %v, want 3", got)
	}
	if got := c.FloodScaleOf(ModeOurs, 1000); got != 1 {
		t.Errorf("ours at 1000: %v, want 1", got)
	}
	if got := c.FloodScaleOf(ModeBaseline, 100); got != 15 {
		t.Errorf("baseline at 100 (no flood scale given): %v, want the hold's 15", got)
	}
}

func TestParseFloodScaleByNOrForAll(t *testing.T) {
	for in, want := range map[string]map[int]float64{
		DefaultFloodScale:         {100: 1, 1000: 1},
		DefaultBaselineFloodScale: {1000: 3},
		"5":                       {0: 5},
		" 2.5 , 1000=3 ":          {0: 2.5, 1000: 3},
		"":                        {},
	} {
		got, err := ParseFloodScale(in)
		if err != nil || !maps.Equal(got, want) {
			t.Errorf("ParseFloodScale(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"0", "100=0", "100=-1", "x=1", "100=x", "0=2", "100=1,100=2", "1,2"} {
		if _, err := ParseFloodScale(bad); err == nil {
			t.Errorf("ParseFloodScale(%q) took it", bad)
		}
	}
}

func TestFloodScaleForFallsBackToTheDefaultThenScale(t *testing.T) {
	c := &Config{Scale: 15, FloodScale: map[int]float64{100: 1, 1000: 3}}
	if c.FloodScaleFor(100) != 1 || c.FloodScaleFor(1000) != 3 || c.FloodScaleFor(500) != 15 {
		t.Errorf("by N: %g %g %g", c.FloodScaleFor(100), c.FloodScaleFor(1000), c.FloodScaleFor(500))
	}
	c.FloodScale[0] = 5
	if c.FloodScaleFor(500) != 5 || c.FloodScaleFor(100) != 1 {
		t.Errorf("for every N: %g %g", c.FloodScaleFor(500), c.FloodScaleFor(100))
	}
	c = &Config{Ns: []int{1}, Modes: []Mode{ModeOurs}, Scale: 15, CreateConcurrency: 1, DeleteConcurrency: 1, Probes: 2, FloodScale: map[int]float64{100: 0}}
	if c.validate() == nil {
		t.Error("a zero flood scale is valid")
	}
}

func TestTimelineConvertsEachPhaseAtItsScale(t *testing.T) {
	t0 := time.Now()
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	tl := timeline{flood: 2, hold: 15}
	if got := tl.sim(at(1), at(4)); got != 6 {
		t.Errorf("before the switch: %g, want 6", got)
	}
	if tl.current() != 2 {
		t.Errorf("current before the switch: %g", tl.current())
	}
	tl.switched = at(10)
	for _, c := range []struct{ a, b, want float64 }{
		{1, 4, 6},          // all before
		{10, 12, 30},       // all after
		{8, 12, 4 + 30},    // across: 2 s at 2, 2 s at 15
		{12, 8, -(4 + 30)}, // reversed
	} {
		if got := tl.sim(at(c.a), at(c.b)); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("sim(%g, %g) = %g, want %g", c.a, c.b, got, c.want)
		}
	}
	if tl.current() != 15 {
		t.Errorf("current after the switch: %g", tl.current())
	}
}

func TestFloodGivesUpAtThreeFloorsPlusAMinute(t *testing.T) {
	began := time.Now()
	s := &scenario{tl: timeline{flood: 3, hold: 15}, floodBegan: began}
	b := s.floodBounds(1000)
	// 3 × 4.5 simulated min at scale 3 = 4.5 real min, plus a real minute.
	if b.since != began || b.limit != 5*time.Minute+30*time.Second {
		t.Errorf("flood bounds %+v", b)
	}
	if b.stall != 200*time.Second { // 10 simulated min at scale 3
		t.Errorf("flood stall %v", b.stall)
	}
	s.tl.switched = time.Now()
	if d := s.bounds(10); d.stall != stallSlack || d.limit != s.tl.hold.toReal(Floor(10)+runSlack)+realSlack+10*perVMRealSlack {
		t.Errorf("bounds after the switch %+v", d)
	}
}

func TestCombineRunsTakesThePeakAndSumsTheRest(t *testing.T) {
	rss, cpu, held := combineRuns([]ControllerRun{
		{Phase: phaseFlood, PeakRSSMiB: 80, CPUSeconds: 10, HeldBack: 7},
		{Phase: phaseHold, PeakRSSMiB: 60, CPUSeconds: 5, HeldBack: 3},
	})
	if rss != 80 || cpu != 15 || held != 10 {
		t.Errorf("combineRuns = %g, %g, %g", rss, cpu, held)
	}
	_, _, held = combineRuns([]ControllerRun{{HeldBack: Num(nan)}, {HeldBack: Num(nan)}})
	if !math.IsNaN(float64(held)) {
		t.Errorf("held back without the metric = %g", held)
	}
	_, _, held = combineRuns([]ControllerRun{{HeldBack: Num(nan)}, {HeldBack: 4}})
	if held != 4 {
		t.Errorf("held back of one run = %g", held)
	}
}

func TestFakeTimingFollowsTheScale(t *testing.T) {
	c := &Config{}
	ft := c.fakeTiming(15)
	if ft.BootDelay != 2*time.Second || ft.RateLimits.Minute != 4*time.Second || ft.RateLimits.Hour != 4*time.Minute ||
		ft.RateLimits.KeyListWindow != 4*time.Second || ft.RateLimits.PerMinute != PerMinute || ft.RateLimits.PerHour != PerHour {
		t.Errorf("fakeTiming(15) = %+v", ft)
	}
	if ft := c.fakeTiming(1); ft.BootDelay != BootDelay || ft.DeleteLag != deleteLag || ft.RateLimits.Hour != time.Hour {
		t.Errorf("fakeTiming(1) = %+v", ft)
	}
}

func TestDeletedAtIsTheEarlierOfCallAndWatch(t *testing.T) {
	t0 := time.Unix(1000, 0)
	cases := []struct {
		name          string
		call, watched time.Time
		want          time.Time
	}{
		{"call only", t0, time.Time{}, t0},
		{"watch only", time.Time{}, t0, t0},
		{"watch first", t0.Add(time.Second), t0, t0},
		{"call first", t0, t0.Add(time.Second), t0},
		{"neither", time.Time{}, time.Time{}, time.Time{}},
	}
	for _, c := range cases {
		v := vmTimes{deleted: c.call, deleteSeen: c.watched}
		if got := v.deletedAt(); !got.Equal(c.want) {
			t.Errorf("%s: deletedAt %v, want %v", c.name, got, c.want)
		}
	}
}

func TestSawStampsRunningAndDeletionOnce(t *testing.T) {
	t0 := time.Unix(1000, 0)
	vm := &hfv1.VirtualMachine{}
	var v vmTimes
	vm.Status.Status = hfv1.VmStatusRunning
	v.saw(vm, t0) // no IP yet
	if !v.running.IsZero() {
		t.Fatalf("running without an IP stamped at %v", v.running)
	}
	vm.Status.PublicIP = "127.0.0.2"
	v.saw(vm, t0.Add(time.Second))
	v.saw(vm, t0.Add(2*time.Second))
	if !v.running.Equal(t0.Add(time.Second)) {
		t.Errorf("running %v, want the first sighting %v", v.running, t0.Add(time.Second))
	}
	if !v.deleteSeen.IsZero() {
		t.Errorf("deletion seen on a live VM at %v", v.deleteSeen)
	}
	vm.DeletionTimestamp = &metav1.Time{Time: t0}
	v.saw(vm, t0.Add(3*time.Second))
	v.sawDeletion(t0.Add(4 * time.Second))
	if !v.deleteSeen.Equal(t0.Add(3 * time.Second)) {
		t.Errorf("deletion seen %v, want the first sighting %v", v.deleteSeen, t0.Add(3*time.Second))
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

func TestLifecycleRequestsLeaveTheHoldOut(t *testing.T) {
	all := map[string]int{"GET /v2/droplets": 500, "POST /v2/droplets": 100, "DELETE /v2/droplets": 1000}
	hold := map[string]int{"GET /v2/droplets": 300}
	got := lifecycleRequests(all, hold)
	want := map[string]int{"GET /v2/droplets": 200, "POST /v2/droplets": 100, "DELETE /v2/droplets": 1000}
	if !maps.Equal(got, want) {
		t.Errorf("lifecycle %v, want %v", got, want)
	}
	if got := lifecycleRequests(map[string]int{"GET /v2/droplets": 5}, map[string]int{"GET /v2/droplets": 5}); len(got) != 0 {
		t.Errorf("an endpoint only the hold used is listed: %v", got)
	}
}

func TestGoneFromKubeFirstComparesWithTheDeleteAccepted(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	one := map[int]bool{1: true}
	for _, c := range []struct {
		name string
		v    vmTimes
		want bool
	}{
		{"still in Kubernetes", vmTimes{dropletIDs: one, gone: at(10), goneAfter: at(10)}, false},
		{"never had a droplet", vmTimes{vanished: at(5)}, false},
		{"gone after the delete", vmTimes{dropletIDs: one, gone: at(10), goneAfter: at(10), vanished: at(11)}, false},
		{"gone before the delete", vmTimes{dropletIDs: one, gone: at(10), goneAfter: at(10), vanished: at(9)}, true},
		{"gone, droplet live", vmTimes{dropletIDs: one, vanished: at(9)}, true},
		// Purged between polls at 20 and 40: only before 20 is certain.
		{"purged, gone within the polls", vmTimes{dropletIDs: one, gone: at(40), goneAfter: at(20), vanished: at(30)}, false},
		{"purged, gone before the polls", vmTimes{dropletIDs: one, gone: at(40), goneAfter: at(20), vanished: at(19)}, true},
	} {
		if got := c.v.goneFromKubeFirst(); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestTimelineConvertsLaterSwitchesAtTheirScales(t *testing.T) {
	t0 := time.Now()
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	tl := timeline{flood: 3}
	tl.switchTo(at(10), 15)
	tl.switchTo(at(20), 1)
	if tl.hold != 15 || tl.current() != 1 {
		t.Fatalf("hold %g, current %g", tl.hold, tl.current())
	}
	for _, c := range []struct{ a, b, want float64 }{
		{0, 10, 30},
		{12, 18, 90},
		{21, 25, 4},
		{5, 25, 15 + 150 + 5}, // 5 s at 3, 10 at 15, 5 at 1
		{25, 5, -(15 + 150 + 5)},
	} {
		if got := tl.sim(at(c.a), at(c.b)); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("sim(%g, %g) = %g, want %g", c.a, c.b, got, c.want)
		}
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
