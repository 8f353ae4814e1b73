package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
)

// passingLarge meets every target of the large scenario.
func passingLarge() LargeResult {
	return LargeResult{VMs: 10000, Envs: 10, Event: 100, NewEvent: 100, PeakRSSMiB: 300,
		HoldVMs: 10000, HoldSeconds: 3600, PerVMHour: 0.3,
		NewEventRunning: 100, NewEventOverhead: Dist{Count: 100, P95: 2.5},
		BusyVMs: 1000, BusyDelete: Dist{Count: 1000, P95: 10}, Overlap: 0.9,
		Tokens: []LargeToken{{Env: "bench-00"}, {Env: "bench-01"}}}
}

func TestLargeTargetsPassAndFailEachOnItsOwn(t *testing.T) {
	r := passingLarge()
	if got := statuses(EvaluateLarge(&r)); got != "PASS PASS PASS PASS PASS PASS" {
		t.Fatalf("statuses %s: %+v", got, EvaluateLarge(&r))
	}
	for _, c := range []struct {
		breakIt func(r *LargeResult)
		want    string
	}{
		{func(r *LargeResult) { r.PeakRSSMiB = 401 }, "FAIL PASS PASS PASS PASS PASS"},
		{func(r *LargeResult) { r.PerVMHour = 0.51 }, "PASS FAIL PASS PASS PASS PASS"},
		{func(r *LargeResult) { r.HoldVMs = 0 }, "PASS FAIL PASS PASS PASS PASS"},
		// The new event is in both the event target and the no-delay one.
		{func(r *LargeResult) { r.NewEventOverhead.P95 = 3.01 }, "PASS PASS FAIL PASS FAIL PASS"},
		{func(r *LargeResult) { r.NewEventRunning = 99 }, "PASS PASS FAIL PASS FAIL PASS"},
		{func(r *LargeResult) { r.Tokens[1].TooMany = 2 }, "PASS PASS PASS FAIL PASS PASS"},
		{func(r *LargeResult) { r.Overlap = 0 }, "PASS PASS PASS PASS FAIL PASS"}, // the busy token was not busy meanwhile
		{func(r *LargeResult) { r.BusyDelete.P95 = 15.01 }, "PASS PASS PASS PASS FAIL PASS"},
		{func(r *LargeResult) { r.BusyMissing = 1 }, "PASS PASS PASS PASS FAIL PASS"},
		{func(r *LargeResult) { r.GoneBeforeDelete = 1 }, "PASS PASS PASS PASS FAIL PASS"},
		{func(r *LargeResult) { r.Duplicates = 1 }, "PASS PASS PASS PASS PASS FAIL"},
		{func(r *LargeResult) { r.Leaked = 1 }, "PASS PASS PASS PASS PASS FAIL"},
		{func(r *LargeResult) { r.Aborted = true }, "FAIL FAIL FAIL FAIL FAIL FAIL"},
	} {
		r := passingLarge()
		c.breakIt(&r)
		targets := EvaluateLarge(&r)
		if got := statuses(targets); got != c.want {
			t.Errorf("got %s, want %s: %+v", got, c.want, targets)
		}
		if !(&LargeReport{Targets: targets}).Missed() {
			t.Errorf("%s not Missed", c.want)
		}
	}
	r = passingLarge()
	r.Tokens[0].TooMany, r.Tokens[1].TooMany = 3, 4
	if d := EvaluateLarge(&r)[3].Detail; d != "bench-00 3, bench-01 4" {
		t.Errorf("429s detail %q", d)
	}
}

func TestRequestsInCountsOneTokensWindow(t *testing.T) {
	t0 := time.Now()
	a, b := fakedo.TokenHash("a"), fakedo.TokenHash("b")
	rec := func(s int, hash, pattern string, status int) fakedo.RequestRecord {
		return fakedo.RequestRecord{Time: t0.Add(time.Duration(s) * time.Second), TokenHash: hash, Pattern: pattern, Status: status}
	}
	records := []fakedo.RequestRecord{
		rec(0, a, "GET /v2/droplets", 200),
		rec(1, a, "GET /v2/droplets", 429),
		rec(1, b, "POST /v2/droplets", 202),
		rec(2, a, "DELETE /v2/droplets", 204),
		rec(3, a, "GET /v2/droplets", 200),
	}
	got := requestsIn(records, a, t0.Add(time.Second), t0.Add(3*time.Second))
	if got.total() != 2 || got.tooMany != 1 || got.byEndpoint["GET /v2/droplets"] != 1 || got.byEndpoint["DELETE /v2/droplets"] != 1 {
		t.Errorf("token a in [1 s, 3 s): %+v", got)
	}
	if all := requestsIn(records, "", time.Time{}, time.Time{}); all.total() != 5 || all.tooMany != 1 {
		t.Errorf("every token, open window: %+v", all)
	}
}

func TestOverlapOfTwoSpans(t *testing.T) {
	t0 := time.Now()
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	for _, c := range []struct {
		a0, a1, b0, b1 int
		want           float64
	}{
		{0, 10, 5, 20, 5},
		{0, 10, 2, 4, 2},
		{5, 20, 0, 10, 5},
		{0, 10, 10, 20, 0},
		{0, 10, 12, 20, 0},
	} {
		if got := overlap(at(c.a0), at(c.a1), at(c.b0), at(c.b1)); got != c.want {
			t.Errorf("overlap(%v) = %g, want %g", c, got, c.want)
		}
	}
}

func TestLargeConfigNeedsTwoEnvironmentsAndEvenSpread(t *testing.T) {
	ok := LargeConfig{VMs: 500, Envs: 5, Event: 50, NewEvent: 50, BuildScale: 3, HoldScale: 15, EventScale: 1, KeyScope: KeyScopeEnvironment}
	if err := ok.validate(); err != nil {
		t.Fatal(err)
	}
	for _, breakIt := range []func(c *LargeConfig){
		func(c *LargeConfig) { c.Envs = 1 },
		func(c *LargeConfig) { c.VMs = 501 },
		func(c *LargeConfig) { c.Event = 0 },
		func(c *LargeConfig) { c.EventScale = 0 },
		func(c *LargeConfig) { c.KeyScope = "all" },
	} {
		c := ok
		breakIt(&c)
		if c.validate() == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

func TestLargeReportShowsTokensPhasesAndTheAPIServersShare(t *testing.T) {
	r := passingLarge()
	r.CPUSeconds, r.APIServerCPU, r.EtcdCPU = 100, 250, 50
	r.Tokens[1].EventDeleted = Dist{Count: 1000, P95: 10}
	r.Phases = []LargePhase{{Name: phaseBuild, Scale: 3, RealSeconds: 600, ControllerCPU: 80, APIServerCPU: 240, EtcdCPU: 40, BenchCPU: 60}}
	rep := &LargeReport{Config: LargeConfig{VMs: 10000, Envs: 10, Event: 100, NewEvent: 100, BuildScale: 3, HoldScale: 15, EventScale: 1},
		Result: r, Targets: EvaluateLarge(&r)}
	var out bytes.Buffer
	WriteLarge(&out, rep)
	text := out.String()
	for _, want := range []string{
		"10000 VMs across 10 Environments",
		"scales (simulated s per real s): build-up 3, hold 15, new event 1",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	if f := strings.Fields(lineWith(t, text, "kube-apiserver CPU (s), share")); f[len(f)-1] != "62%" {
		t.Errorf("apiserver share: %q", f) // 250 of 400
	}
	if f := strings.Fields(lineWith(t, text, "kube-apiserver CPU / controller CPU")); f[len(f)-1] != "2.50" {
		t.Errorf("apiserver / controller: %q", f)
	}
	if f := strings.Fields(lineWith(t, text, "bench-01")); f[len(f)-1] != "10.00" || f[len(f)-2] != "-" {
		t.Errorf("busy token's row: %q", f)
	}
	// 240 CPU s in 600 real s: 0.40 cores for the apiserver, 0.70 for all.
	if f := strings.Fields(lineWith(t, text, phaseBuild+" ")); f[len(f)-3] != "0.40" || f[len(f)-2] != "0.70" {
		t.Errorf("build-up phase: %q", f)
	}
	if !strings.Contains(text, "PASS  no duplicate, no leak") {
		t.Errorf("targets missing:\n%s", text)
	}
}

func TestLargePollsBeforeTheDeleteLagPurges(t *testing.T) {
	l := &large{scenario: &scenario{track: newTracker(nil)}}
	for _, c := range []struct {
		scale timeScale
		want  time.Duration
	}{
		{1, maxLargePoll},        // lag 2 s: a quarter is 500 ms, capped
		{15, deleteLag / 15 / 4}, // lag 133 ms: 33 ms
		{1000, pollInterval},     // lag 2 ms: no faster than the fleet's polls
	} {
		l.pollFor(c.scale)
		if got := time.Duration(l.track.pollEvery.Load()); got != c.want {
			t.Errorf("scale %g: every %v, want %v", c.scale, got, c.want)
		}
	}
}
