package bench

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
)

func TestPoolTracesKeepTheirShapes(t *testing.T) {
	traces, err := PoolTraces(7, 60, 1)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]PoolTrace{}
	for _, tr := range traces {
		byName[tr.Name] = tr
		if tr.PreStart != 600 {
			t.Errorf("%s: made %g s before its start, want 600", tr.Name, tr.PreStart)
		}
		if !slices.IsSorted(tr.Arrivals) || tr.Arrivals[0] < 0 || tr.Arrivals[len(tr.Arrivals)-1] >= tr.End {
			t.Errorf("%s: arrivals not sorted within [0, %g): %v", tr.Name, tr.End, tr.Arrivals)
		}
		if tr.VMs() != 60 {
			t.Errorf("%s: %d VMs, want 60", tr.Name, tr.VMs())
		}
	}
	steady := byName[TraceSteady]
	if steady.Seats != 60 || steady.Arrivals[1]-steady.Arrivals[0] != 3 || steady.Arrivals[59] != 177 {
		t.Errorf("steady: seats %d, arrivals %v; want 60 seats, one every 3 s", steady.Seats, steady.Arrivals)
	}
	count := func(xs []float64, from, to float64) int {
		n := 0
		for _, x := range xs {
			if x >= from && x < to {
				n++
			}
		}
		return n
	}
	shop := byName[TraceWorkshop]
	if a, b, c := count(shop.Arrivals, 0, 180), count(shop.Arrivals, 180, 1080), count(shop.Arrivals, 1200, 1320); a != 36 || b != 12 || c != 12 || shop.End != 1500 || shop.Seats != 60 {
		t.Errorf("workshop: %d in the first 3 min, %d over the next 15, %d after the break, end %g, seats %d; want 36, 12, 12, 1500, 60",
			a, b, c, shop.End, shop.Seats)
	}
	trickle := byName[TraceTrickle]
	if trickle.End != 1500 || count(trickle.Arrivals, 0, 750) == 0 || count(trickle.Arrivals, 750, 1500) == 0 {
		t.Errorf("trickle: not spread over 25 min: %v", trickle.Arrivals)
	}
	seats := byName[TraceSeats]
	if seats.Seats != 40 || !slices.Equal(seats.Arrivals, shop.Arrivals) {
		t.Errorf("seats-40: %d seats, arrivals the workshop's: %v", seats.Seats, slices.Equal(seats.Arrivals, shop.Arrivals))
	}

	again, _ := PoolTraces(7, 60, 1)
	other, _ := PoolTraces(8, 60, 1)
	if !slices.Equal(again[2].Arrivals, trickle.Arrivals) || slices.Equal(other[2].Arrivals, trickle.Arrivals) {
		t.Error("the same seed must give the same trickle, another seed another")
	}
	small, err := PoolTraces(7, 10, 0.1)
	if err != nil || small[0].PreStart != 60 || small[1].End != 150 || small[3].Seats != 6 || small[1].VMs() != 10 {
		t.Errorf("scaled traces: %+v, %v", small, err)
	}
	for _, bad := range []struct {
		vms   int
		scale float64
	}{{4, 1}, {60, 0}, {60, 1.5}} {
		if _, err := PoolTraces(1, bad.vms, bad.scale); err == nil {
			t.Errorf("%d VMs at scale %g accepted", bad.vms, bad.scale)
		}
	}
}

func TestPoolPlansLeaveNoPoolOffTheSeatsTrace(t *testing.T) {
	traces, _ := PoolTraces(1, 60, 1)
	if n := len(poolPlans(traces, nil)); n != 11 {
		t.Errorf("%d runs, want 3 sides × 3 traces + 2 pool sides on seats-40", n)
	}
	got := poolPlans(traces, []string{"auto", "fixed-15/steady"})
	if len(got) != 5 || got[0].side.name != SideFixed || got[0].trace.Name != TraceSteady {
		t.Errorf("only auto and fixed-15/steady: %+v", got)
	}
}

func TestSeatFigures(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	// 4 seats: the pool follows the seats left, one excess lasts 4 s, and
	// once full after 20 s the pool is gone within the grace.
	samples := []poolSample{
		{At: at(0), Arrived: 0, AtFake: 3, InKube: 3},
		{At: at(2), Arrived: 2, AtFake: 3, InKube: 2}, // over by 1
		{At: at(4), Arrived: 2, AtFake: 2, InKube: 3}, // still, in the cluster
		{At: at(6), Arrived: 2, AtFake: 2, InKube: 2},
		{At: at(20), Arrived: 4, AtFake: 1, InKube: 0}, // full, one being deleted
		{At: at(22), Arrived: 4, AtFake: 0, InKube: 0},
		{At: at(40), Arrived: 5, AtFake: 0, InKube: 0},
	}
	f := seatFigures(samples, 4, 15*time.Second)
	if f.MaxOver != 1 || f.LongestOver != 4 || f.FullAfter != 20 || f.PoolAfterFull != 0 || f.Samples != 7 {
		t.Errorf("figures %+v", f)
	}
	samples[6].InKube = 1 // a member kept once full
	if f := seatFigures(samples, 4, 15*time.Second); f.PoolAfterFull != 1 {
		t.Errorf("a member after full: %+v", f)
	}
	if f := seatFigures(samples[:4], 4, 15*time.Second); !math.IsNaN(float64(f.FullAfter)) {
		t.Errorf("never full: %+v", f)
	}
}

func TestWaitedBootCountsSlowAndMissing(t *testing.T) {
	if n := waitedBoot([]Num{0.4, 14.9, 15.1, 31, Num(math.NaN())}, 30*time.Second); n != 3 {
		t.Errorf("waited %d, want 3 (above 15 s or never running)", n)
	}
}

// poolRunsPassing is a run of every side and trace that meets every target.
func poolRunsPassing() []PoolRun {
	created := time.Unix(0, 0)
	start := created.Add(PoolPreStart)
	ok := func(side, trace string, seats int) PoolRun {
		r := PoolRun{Side: side, Trace: trace, Seats: seats, VMs: 60, Running: 60, EventCreated: created, Start: start,
			TTR: Dist{Count: 60, P95: 1.2}, Claims: 60, ClaimTTRs: []float64{0.3, 0.5, 0.9}, WaitedBoot: 0,
			RequestsTotal: 200, PoolDropletSeconds: 3600, DrainSeconds: 5,
			Before: BeforeStart{FirstPoolAfterCreation: 420, FirstPoolBeforeStart: 180, ReadyAtStart: 15, WantedAtStart: 15},
			Seat:   SeatFigures{Samples: 100, MaxOver: 1, LongestOver: 4, FullAfter: 900}}
		switch side {
		case SideNoPool:
			r.WarmPool, r.TTR.P95, r.Claims, r.ClaimTTRs, r.RequestsTotal, r.PoolDropletSeconds = "0", 31, 0, nil, 150, 0
			r.DrainSeconds, r.Before = Num(math.NaN()), BeforeStart{FirstPoolAfterCreation: Num(math.NaN()), FirstPoolBeforeStart: Num(math.NaN())}
		case SideFixed:
			r.WarmPool = "15"
		case SideAuto:
			r.WarmPool, r.PoolDropletSeconds, r.Before.WantedAtStart, r.Before.ReadyAtStart = "auto", 2000, 8, 8
		}
		return r
	}
	var out []PoolRun
	for _, tr := range []string{TraceSteady, TraceWorkshop, TraceTrickle} {
		for _, side := range []string{SideNoPool, SideFixed, SideAuto} {
			out = append(out, ok(side, tr, 60))
		}
	}
	return append(out, ok(SideFixed, TraceSeats, 40), ok(SideAuto, TraceSeats, 40))
}

func TestWarmPoolTargetsPassAndFail(t *testing.T) {
	passing := statuses(EvaluateWarmPool(poolRunsPassing(), 60))
	if strings.Contains(passing, Fail) || strings.Contains(passing, Skip) {
		t.Fatalf("a run meeting every target: %s\n%+v", passing, EvaluateWarmPool(poolRunsPassing(), 60))
	}
	find := func(rs []PoolRun, side, trace string) *PoolRun { return poolRuns(rs).get(side, trace) }
	for name, spoil := range map[string]func(rs []PoolRun){
		"slow fixed pool":          func(rs []PoolRun) { find(rs, SideFixed, TraceSteady).TTR.P95 = 2.5 },
		"slow auto pool":           func(rs []PoolRun) { find(rs, SideAuto, TraceSteady).TTR.P95 = 2.5 },
		"a VM did not run":         func(rs []PoolRun) { find(rs, SideAuto, TraceSteady).Running = 59 },
		"a create held back":       func(rs []PoolRun) { find(rs, SideFixed, TraceSteady).HeldBack = map[string]float64{"create": 1} },
		"a pool create held back":  func(rs []PoolRun) { find(rs, SideAuto, TraceSteady).HeldBack = map[string]float64{"pool": 2} },
		"a 429":                    func(rs []PoolRun) { find(rs, SideAuto, TraceSteady).TooMany = 1 },
		"too many requests":        func(rs []PoolRun) { find(rs, SideFixed, TraceSteady).RequestsTotal = 226 },
		"fast without a pool":      func(rs []PoolRun) { find(rs, SideNoPool, TraceSteady).TTR.P95 = 29 },
		"workshop waits":           func(rs []PoolRun) { find(rs, SideAuto, TraceWorkshop).WaitedBoot = 7 },
		"trickle waits":            func(rs []PoolRun) { find(rs, SideAuto, TraceTrickle).WaitedBoot = 4 },
		"workshop hours":           func(rs []PoolRun) { find(rs, SideAuto, TraceWorkshop).PoolDropletSeconds = 2900 },
		"trickle hours":            func(rs []PoolRun) { find(rs, SideAuto, TraceTrickle).PoolDropletSeconds = 2800 },
		"cheap but serving nobody": func(rs []PoolRun) { r := find(rs, SideAuto, TraceWorkshop); r.Running, r.WaitedBoot = 0, 0 },
		"pool before the lead":     func(rs []PoolRun) { find(rs, SideFixed, TraceTrickle).Before.FirstPoolBeforeStart = 301 },
		"pool at the creation":     func(rs []PoolRun) { find(rs, SideAuto, TraceSeats).Before.FirstPoolAfterCreation = 10 },
		"fixed pool not ready":     func(rs []PoolRun) { find(rs, SideFixed, TraceWorkshop).Before.ReadyAtStart = 14 },
		"auto pool empty at start": func(rs []PoolRun) {
			b := &find(rs, SideAuto, TraceSteady).Before
			b.WantedAtStart, b.ReadyAtStart = 0, 0
		},
		"over the seats":             func(rs []PoolRun) { find(rs, SideFixed, TraceSeats).Seat.LongestOver = 16 },
		"a member once full":         func(rs []PoolRun) { find(rs, SideAuto, TraceSeats).Seat.PoolAfterFull = 1 },
		"never full":                 func(rs []PoolRun) { find(rs, SideAuto, TraceSeats).Seat.FullAfter = Num(math.NaN()) },
		"a slow claim":               func(rs []PoolRun) { find(rs, SideFixed, TraceWorkshop).ClaimTTRs = []float64{3, 3, 3} },
		"a slow drain":               func(rs []PoolRun) { find(rs, SideAuto, TraceTrickle).DrainSeconds = 71 },
		"no drain":                   func(rs []PoolRun) { find(rs, SideFixed, TraceSteady).DrainSeconds = Num(math.NaN()) },
		"a droplet left":             func(rs []PoolRun) { find(rs, SideNoPool, TraceTrickle).DropletsLeft = 1 },
		"a key left":                 func(rs []PoolRun) { find(rs, SideAuto, TraceWorkshop).KeysLeft = 1 },
		"a duplicate":                func(rs []PoolRun) { find(rs, SideFixed, TraceWorkshop).TwoVMDroplets = 1 },
		"an aborted run":             func(rs []PoolRun) { find(rs, SideNoPool, TraceWorkshop).Aborted = true },
		"an aborted run with target": func(rs []PoolRun) { find(rs, SideFixed, TraceSteady).Aborted = true },
	} {
		runs := poolRunsPassing()
		spoil(runs)
		if got := statuses(EvaluateWarmPool(runs, 60)); !strings.Contains(got, Fail) {
			t.Errorf("%s: %s, want a FAIL", name, got)
		}
	}
	// Runs left out skip their targets rather than fail them.
	only := slices.DeleteFunc(poolRunsPassing(), func(r PoolRun) bool { return r.Trace != TraceSteady })
	if got := statuses(EvaluateWarmPool(only, 60)); strings.Contains(got, Fail) || !strings.Contains(got, Skip) {
		t.Errorf("steady only: %s, want passes and skips", got)
	}
}

func TestSeriesByLabel(t *testing.T) {
	text := `# HELP hf_do_requests_held_back_total x
hf_do_requests_held_back_total{priority="create",token_hash="a"} 2
hf_do_requests_held_back_total{priority="pool",token_hash="a"} 1
hf_do_requests_held_back_total{priority="create",token_hash="b"} 3
hf_do_requests_held_back_totally 9
`
	got := seriesByLabel(text, "hf_do_requests_held_back_total", "priority")
	if len(got) != 2 || got["create"] != 5 || got["pool"] != 1 {
		t.Errorf("by priority %v, want create 5, pool 1", got)
	}
	if got := seriesByLabel("", "hf_do_requests_held_back_total", "priority"); len(got) != 0 {
		t.Errorf("no samples: %v", got)
	}
	if got := sumSeries(text, "hf_do_requests_held_back_total"); got != 6 {
		t.Errorf("sum %g, want 6", got)
	}
}

func TestPoolSecondsEndAtClaimOrDeletion(t *testing.T) {
	t0 := time.Unix(1000, 0)
	l := &lifeLog{lives: map[int]*fakedo.DropletLife{
		1: {ID: 1, Name: "hfdo-pool-a", Created: t0.Add(time.Second)},                   // claimed at +10
		2: {ID: 2, Name: "hfdo-pool-b", Created: t0, Deleted: t0.Add(20 * time.Second)}, // drained
		3: {ID: 3, Name: "hfdo-pool-c", Created: t0},                                    // still there at +30
		4: {ID: 4, Name: "vm-00001", Created: t0.Add(-time.Second)},                     // a VM's own
	}}
	got := l.sum(map[int]time.Time{1: t0.Add(10 * time.Second)}, t0.Add(30*time.Second))
	if got != 59 {
		t.Errorf("pool seconds %g, want 9 + 20 + 30", got)
	}
}

func TestBeforeStartScalesTheLeadBound(t *testing.T) {
	created := time.Unix(0, 0)
	// A trace shrunk to a tenth: made 60 s before its start, the lead bound 30 s.
	r := &PoolRun{WarmPool: "15", Seats: 60, EventCreated: created, Start: created.Add(60 * time.Second),
		Before: BeforeStart{FirstPoolAfterCreation: 40, FirstPoolBeforeStart: 20, ReadyAtStart: 15, WantedAtStart: 15}}
	if ok, why := beforeStartOK(r); !ok {
		t.Errorf("pool 20 s before a scaled start: %s", why)
	}
	r.Before.FirstPoolAfterCreation, r.Before.FirstPoolBeforeStart = 20, 40
	if ok, why := beforeStartOK(r); ok {
		t.Errorf("pool 40 s before a scaled start passed: %s", why)
	}
	r.Before = BeforeStart{FirstPoolAfterCreation: 40, FirstPoolBeforeStart: 20, ReadyAtStart: 6, WantedAtStart: 6}
	r.Seats = 6
	if ok, why := beforeStartOK(r); !ok {
		t.Errorf("fewer seats than the size, all ready: %s", why)
	}
}
