package bench

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean/fake"
)

// poolSides is a run that meets every warm-pool target.
func poolSides() []PoolSide {
	return []PoolSide{
		{Name: "no pool", VMs: 3, Running: 3, TTR: Dist{Count: 3, P95: 31}, TTRs: []Num{31, 31, 32}, DropletsAtEnd: 3},
		{Name: "warm_pool 5", WarmPool: 5, VMs: 3, Running: 3, TTR: Dist{Count: 3, P95: 1.2}, TTRs: []Num{1, 1, 2},
			Claims: 3, DropletsAtEnd: 8, WantedAtEnd: 5, PoolDropletSeconds: 7200},
		{Name: "overflow", Overflow: true, WarmPool: 2, VMs: 3, Running: 3, TTR: Dist{Count: 3, P95: 31}, Claims: 2, FirstClaimed: 2,
			DropletsAtEnd: 5, WantedAtEnd: 2},
	}
}

func TestWarmPoolTargetsPassAndFail(t *testing.T) {
	if got := statuses(EvaluateWarmPool(poolSides(), 3*time.Second)); got != "PASS PASS PASS PASS" {
		t.Fatalf("a run meeting every target: %s", got)
	}
	for name, spoil := range map[string]func(s []PoolSide){
		"slow pool":          func(s []PoolSide) { s[1].TTR.P95 = 2.5 },
		"fast without pool":  func(s []PoolSide) { s[0].TTR.P95 = 29 },
		"overflow missed":    func(s []PoolSide) { s[2].FirstClaimed = 1 },
		"overflow errored":   func(s []PoolSide) { s[2].Errors = []string{"vm-00003"} },
		"a duplicate":        func(s []PoolSide) { s[1].TwoVMDroplets = 1 },
		"a leak":             func(s []PoolSide) { s[2].DropletsAtEnd = 6 },
		"a VM did not run":   func(s []PoolSide) { s[1].Running = 2 },
		"an aborted overrun": func(s []PoolSide) { s[2].Aborted = true },
	} {
		sides := poolSides()
		spoil(sides)
		if got := statuses(EvaluateWarmPool(sides, 3*time.Second)); !strings.Contains(got, Fail) {
			t.Errorf("%s: %s, want a FAIL", name, got)
		}
	}
	if got := EvaluateWarmPool(poolSides()[:2], time.Second); len(got) != 1 || got[0].Status != Skip {
		t.Errorf("an unfinished run: %+v", got)
	}
}

func TestPoolCostPairsVMsByArrival(t *testing.T) {
	sides := poolSides()
	sides[1].TTRs[2] = Num(math.NaN()) // never ran: not counted
	costs := poolCosts(sides)
	if len(costs) != 1 {
		t.Fatalf("costs %+v", costs)
	}
	if c := costs[0]; c.PoolDropletHours != 2 || math.Abs(c.WaitSavedHours*3600-60) > 1e-9 {
		t.Errorf("cost %+v, want 2 droplet-hours and 60 s saved", c)
	}
}

func TestPoolSecondsEndAtClaimOrDeletion(t *testing.T) {
	t0 := time.Unix(1000, 0)
	l := &lifeLog{lives: map[int]*fake.DropletLife{
		1: {ID: 1, Name: "hfdo-pool-a", Created: t0},                                    // claimed at +10
		2: {ID: 2, Name: "hfdo-pool-b", Created: t0, Deleted: t0.Add(20 * time.Second)}, // drained
		3: {ID: 3, Name: "hfdo-pool-c", Created: t0},                                    // still there at +30
		4: {ID: 4, Name: "vm-00001", Created: t0},                                       // a VM's own
	}}
	got := l.sum(map[int]time.Time{1: t0.Add(10 * time.Second)}, t0.Add(30*time.Second))
	if got != 60 {
		t.Errorf("pool seconds %g, want 10 + 20 + 30", got)
	}
}
