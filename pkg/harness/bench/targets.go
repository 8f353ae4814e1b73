package bench

import (
	"fmt"
	"slices"
)

// Target statuses.
const (
	Pass = "PASS"
	Fail = "FAIL"
	Skip = "SKIP" // the run lacks the scenario the target needs
)

// Target is one checked goal of a benchmark.
type Target struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
}

// The fleet's goals: a steady state far below the baseline's requests, a
// flood bound by DigitalOcean's limits rather than the controller, VMs that
// run as their droplets boot, a small memory footprint, and deletes that
// never wait behind creates.
const (
	targetN          = 1000
	overheadN        = 100
	maxRequestRatio  = 1.0 / 20
	maxOverheadP95   = 2.0 // simulated seconds
	maxWallOverFloor = 1.2
	maxRSSMiB        = 150
	maxDeleteInFlood = 2.0 // times the idle p95
	// minTimedDeletes is the fewest probe deletions, idle and in the flood
	// each, whose p95s are compared: with one each (-probes 2, as
	// -reachability runs) the ratio of two tens-of-milliseconds samples
	// is noise.
	minTimedDeletes = 5
)

// Evaluate checks every target against the results.
func Evaluate(results []Result) []Target {
	find := func(m Mode, n int) *Result {
		// The flood the controller ships with: the SSH check, the first path run.
		i := slices.IndexFunc(results, func(r Result) bool { return r.Mode == m && r.N == n && r.checksSSH() })
		if i < 0 {
			i = slices.IndexFunc(results, func(r Result) bool { return r.Mode == m && r.N == n })
		}
		if i < 0 {
			return nil
		}
		return &results[i]
	}
	ours, base := find(ModeOurs, targetN), find(ModeBaseline, targetN)
	ours100 := find(ModeOurs, overheadN)
	var largest *Result
	for i := range results {
		if r := &results[i]; r.Mode == ModeOurs && (largest == nil || r.N > largest.N || r.N == largest.N && !largest.checksSSH() && r.checksSSH()) {
			largest = r
		}
	}
	need := fmt.Sprintf("needs ours at N=%d", targetN)
	// A scenario run without a hold has no steady state to compare.
	held := func(r *Result) *Result {
		if r != nil && r.HoldSeconds == 0 && !r.Aborted {
			return nil
		}
		return r
	}
	return append([]Target{
		check("steady-state DO requests per VM-hour at N=1000 ≤ 1/20 of baseline",
			[]*Result{held(ours), held(base)}, "needs ours and baseline at N=1000 with a hold",
			func() (bool, string) {
				o, b := float64(ours.PerVMHour), float64(base.PerVMHour)
				return o <= b*maxRequestRatio, fmt.Sprintf("ours %.3f, baseline %.3f (ratio %s)", o, b, oneIn(o, b))
			}),
		check("zero 429s at N=1000 (ours)", []*Result{ours}, need, func() (bool, string) {
			return ours.TooMany == 0, fmt.Sprintf("%d", ours.TooMany)
		}),
		check("p95 time-to-running overhead ≤ 2 s at N=100 (ours)", []*Result{ours100}, "needs ours at N=100", func() (bool, string) {
			if ours100.Running < ours100.N {
				return false, fmt.Sprintf("only %d of %d VMs ran", ours100.Running, ours100.N)
			}
			return ours100.Overhead.P95 <= maxOverheadP95, fmt.Sprintf("%.2f s", ours100.Overhead.P95)
		}),
		check("wall time at N=1000 ≤ 1.2 × rate-limit floor (ours)", []*Result{ours}, need, func() (bool, string) {
			if ours.Running < ours.N {
				return false, fmt.Sprintf("only %d of %d VMs ran", ours.Running, ours.N)
			}
			wall := float64(ours.Wall)
			return wall <= maxWallOverFloor*ours.Floor,
				fmt.Sprintf("%.2f min, floor %.2f min (%.2f×)", wall/60, ours.Floor/60, wall/ours.Floor)
		}),
		check("peak controller RSS ≤ 150 MiB at N=1000 (ours)", []*Result{ours}, need, func() (bool, string) {
			return ours.PeakRSSMiB <= maxRSSMiB, fmt.Sprintf("%.1f MiB", ours.PeakRSSMiB)
		}),
		check("deletes do not wait behind queued creates: p95 delete-to-gone in the flood ≤ 2 × idle (ours, largest N)",
			[]*Result{fewDeletes(largest)}, fmt.Sprintf("needs ours with at least %d probes (%d deletes idle, %d in the flood)", 2*minTimedDeletes, minTimedDeletes, minTimedDeletes),
			func() (bool, string) {
				idle, flood := largest.DeleteIdle.P95, largest.DeleteFlood.P95
				detail := fmt.Sprintf("N=%d: in flood %.2f s, idle %.2f s", largest.N, flood, idle)
				if m := largest.DeleteIdleMissing + largest.DeleteFloodMissing; m > 0 || largest.DeleteIdle.Count == 0 {
					return false, detail + fmt.Sprintf(" (%d deletes never finished)", m)
				}
				return flood <= maxDeleteInFlood*idle, detail
			}),
	}, slices.Concat(scaleTargets(ours), eventEndTargets(ours), []Target{tidyTarget(ours)}, reachabilityTargets(results), soldOutTargets(ours))...)
}

// fewDeletes is r, or nil when it timed too few probe deletions to compare
// (deletions that never finished count: they fail the target).
func fewDeletes(r *Result) *Result {
	if r == nil || r.Aborted {
		return r
	}
	idle, flood := r.DeleteIdle.Count+r.DeleteIdleMissing, r.DeleteFlood.Count+r.DeleteFloodMissing
	if idle < minTimedDeletes || flood < minTimedDeletes {
		return nil
	}
	return r
}

// check builds a Target from the results it uses: Skip with why if one is
// missing, Fail if one was aborted, else what measure says.
func check(name string, uses []*Result, why string, measure func() (bool, string)) Target {
	for _, r := range uses {
		if r == nil {
			return Target{Name: name, Status: Skip, Detail: why}
		}
	}
	for _, r := range uses {
		if r.Aborted {
			return Target{Name: name, Status: Fail, Detail: fmt.Sprintf("the %s scenario at N=%d was aborted", r.Mode, r.N)}
		}
	}
	return verdict(name, measure)
}

// verdict is the Target measure finds: Pass when it says ok.
func verdict(name string, measure func() (bool, string)) Target {
	ok, detail := measure()
	status := Fail
	if ok {
		status = Pass
	}
	return Target{Name: name, Status: status, Detail: detail}
}

// oneIn renders a/b as "1/x".
func oneIn(a, b float64) string {
	if a == 0 || b == 0 {
		return fmt.Sprintf("%g/%g", a, b)
	}
	return fmt.Sprintf("1/%.1f", b/a)
}
