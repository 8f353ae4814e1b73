package bench

import (
	"maps"
	"math"
	"strings"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The scenario's pure parts: controller arguments, scales and timelines,
// counting requests, tracking VMs.

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
	s := &scenario{tl: timeline{flood: 3, hold: 15}, floodBegan: began, res: Result{KeyScope: KeyScopeEnvironment}}
	b := s.floodBounds(1000)
	// 3 × 4.5 simulated min at scale 3 = 4.5 real min, plus a real minute.
	if b.since != began || b.limit != 5*time.Minute+30*time.Second {
		t.Errorf("flood bounds %+v", b)
	}
	// A key per VM: 2,000 creates, 3 × 8.5 simulated min = 8.5 real min.
	s.res.KeyScope = KeyScopeVM
	if b := s.floodBounds(1000); b.limit != 9*time.Minute+30*time.Second {
		t.Errorf("flood bounds with a key per VM %+v", b)
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
