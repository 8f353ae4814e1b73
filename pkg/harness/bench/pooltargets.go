package bench

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// The warm pool's targets. A pool is worth its droplets when sessions find
// it ready (p95 within 2 s where arrivals are steady, few waiting a boot
// where they come in rushes or trickle), when it costs little in API calls
// and in droplet time (auto against the fixed size), when it exists only
// from its lead time before the event's start and within the seats left,
// and when it leaves nothing behind.
const (
	maxPoolTTRP95 = 2.0 // seconds, steady arrivals, pool sides
	// maxRequestsOverNoPool bounds a pool side's DigitalOcean requests on
	// the steady trace against the no-pool side's: fill and refills may
	// cost some, not a second fleet's worth.
	maxRequestsOverNoPool = 1.5
	// Waited a boot, per 60 VMs, with auto.
	maxWaitsWorkshop = 6
	maxWaitsTrickle  = 3
	// Auto's unclaimed droplet-hours against fixed-15's.
	maxAutoHoursWorkshop = 0.8
	maxAutoHoursTrickle  = 0.75
	// maxClaimTTR is a claimed VM's time from its session to running.
	maxClaimTTR = 1.0
	// drainSlack is added to one active resync for the drain's bound.
	drainSlack = 10 * time.Second
)

// poolRuns finds runs by side and trace.
type poolRuns []PoolRun

func (rs poolRuns) get(side, trace string) *PoolRun {
	for i := range rs {
		if rs[i].Side == side && rs[i].Trace == trace {
			return &rs[i]
		}
	}
	return nil
}

// EvaluateWarmPool checks every target against the runs; vms is the users
// per trace (the allowances of VMs that may wait a boot scale with it). A
// target whose runs are missing is skipped; one whose run was aborted fails.
func EvaluateWarmPool(runs []PoolRun, vms int) []Target {
	rs := poolRuns(runs)
	var out []Target
	add := func(name string, measure func(get func(side, trace string) *PoolRun) (bool, string), needs ...[2]string) {
		out = append(out, poolTarget(rs, name, needs, measure))
	}
	pool := []string{SideFixed, SideAuto}

	for _, side := range pool {
		add(fmt.Sprintf("steady: p95 time-to-running ≤ %.0f s with %s", maxPoolTTRP95, side), func(get func(string, string) *PoolRun) (bool, string) {
			r := get(side, TraceSteady)
			if ok, why := allRan(r); !ok {
				return false, why
			}
			return r.TTR.P95 <= maxPoolTTRP95, fmt.Sprintf("%.2f s (%d claims of %d VMs)", r.TTR.P95, r.Claims, r.VMs)
		}, [2]string{side, TraceSteady})
		add(fmt.Sprintf("steady: no create held back for the rate limit with %s", side), func(get func(string, string) *PoolRun) (bool, string) {
			r := get(side, TraceSteady)
			held := r.HeldBack["create"] + r.HeldBack["pool"]
			return held == 0 && r.TooMany == 0, fmt.Sprintf("%.0f creates held back (create %.0f, pool %.0f), %d answers 429",
				held, r.HeldBack["create"], r.HeldBack["pool"], r.TooMany)
		}, [2]string{side, TraceSteady})
		add(fmt.Sprintf("steady: DigitalOcean requests ≤ %.1f × no-pool's with %s", maxRequestsOverNoPool, side), func(get func(string, string) *PoolRun) (bool, string) {
			r, base := get(side, TraceSteady), get(SideNoPool, TraceSteady)
			if base.RequestsTotal == 0 {
				return false, "no-pool made no request"
			}
			ratio := float64(r.RequestsTotal) / float64(base.RequestsTotal)
			return ratio <= maxRequestsOverNoPool, fmt.Sprintf("%d against %d (%.2f ×)", r.RequestsTotal, base.RequestsTotal, ratio)
		}, [2]string{side, TraceSteady}, [2]string{SideNoPool, TraceSteady})
	}
	add(fmt.Sprintf("steady: p95 time-to-running ≥ the boot (%v) with no-pool", BootDelay), func(get func(string, string) *PoolRun) (bool, string) {
		r := get(SideNoPool, TraceSteady)
		if ok, why := allRan(r); !ok {
			return false, why
		}
		return r.TTR.P95 >= BootDelay.Seconds(), fmt.Sprintf("%.2f s", r.TTR.P95)
	}, [2]string{SideNoPool, TraceSteady})

	for _, c := range []struct {
		trace string
		waits int
		hours float64
	}{{TraceWorkshop, maxWaitsWorkshop, maxAutoHoursWorkshop}, {TraceTrickle, maxWaitsTrickle, maxAutoHoursTrickle}} {
		allowed := int(math.Ceil(float64(c.waits) * float64(vms) / DefaultPoolVMs))
		add(fmt.Sprintf("%s: at most %d of %d wait a boot with auto", c.trace, allowed, vms), func(get func(string, string) *PoolRun) (bool, string) {
			r := get(SideAuto, c.trace)
			return r.WaitedBoot <= allowed, fmt.Sprintf("%d waited (time-to-running above %.0f s or never running), %d claims",
				r.WaitedBoot, BootDelay.Seconds()/2, r.Claims)
		}, [2]string{SideAuto, c.trace})
		add(fmt.Sprintf("%s: auto's pool droplet-hours ≤ %.2f × fixed-15's", c.trace, c.hours), func(get func(string, string) *PoolRun) (bool, string) {
			a, f := get(SideAuto, c.trace), get(SideFixed, c.trace)
			if ok, why := allRan(a); !ok { // a pool that served nobody is cheap for nothing
				return false, "auto: " + why
			}
			if f.PoolDropletSeconds <= 0 {
				return false, "fixed-15 spent no pool droplet time"
			}
			ratio := a.PoolDropletSeconds / f.PoolDropletSeconds
			return ratio <= c.hours, fmt.Sprintf("%.3f against %.3f droplet-hours (%.2f ×)",
				a.PoolDropletSeconds/3600, f.PoolDropletSeconds/3600, ratio)
		}, [2]string{SideAuto, c.trace}, [2]string{SideFixed, c.trace})
	}

	traces := []string{TraceSteady, TraceWorkshop, TraceTrickle, TraceSeats}
	for _, side := range pool {
		// Every trace that ran is checked; steady at least must have.
		needs := [][2]string{{side, TraceSteady}}
		add(fmt.Sprintf("before the start with %s: no pool droplet until start - %v nor in the first %v after the event's creation, the pool ready at the start",
			side, poolLeadBound, poolLeadBound), func(get func(string, string) *PoolRun) (bool, string) {
			return eachTrace(get, side, traces, beforeStartOK)
		}, needs...)
		add(fmt.Sprintf("seats with %s: the pool never over the seats left for more than %v, none once the event is full", side, seatGrace),
			func(get func(string, string) *PoolRun) (bool, string) {
				f := get(side, TraceSeats).Seat
				ok := f.LongestOver <= seatGrace.Seconds() && !math.IsNaN(float64(f.FullAfter)) && f.PoolAfterFull == 0
				return ok, fmt.Sprintf("at most %d over for %.0f s; full after %s s, then at most %d pool droplets (%d samples)",
					f.MaxOver, f.LongestOver, formatValue("%.0f", float64(f.FullAfter)), f.PoolAfterFull, f.Samples)
			}, [2]string{side, TraceSeats})
	}

	add(fmt.Sprintf("fixed-15: a claimed VM runs within %.0f s (p95, every trace)", maxClaimTTR), func(get func(string, string) *PoolRun) (bool, string) {
		var all []float64
		for _, t := range traces {
			if r := get(SideFixed, t); r != nil {
				all = append(all, r.ClaimTTRs...)
			}
		}
		if len(all) == 0 {
			return false, "no claim"
		}
		d := Summarize(all)
		return d.P95 <= maxClaimTTR, fmt.Sprintf("p95 %.2f s, max %.2f s over %d claims", d.P95, d.Max, d.Count)
	}, [2]string{SideFixed, TraceSteady})
	drainMax := ourActiveResync + drainSlack
	for _, side := range pool {
		add(fmt.Sprintf("drain with %s: no pool droplet %v after the event's end", side, drainMax), func(get func(string, string) *PoolRun) (bool, string) {
			return eachTrace(get, side, traces, func(r *PoolRun) (bool, string) {
				d := float64(r.DrainSeconds)
				if r.PoolDropletSeconds == 0 && d == 0 {
					return true, "no pool droplet to drain"
				}
				return d <= drainMax.Seconds(), formatValue("%.1f s", d)
			})
		}, [2]string{side, TraceSteady})
	}
	add("no duplicate, no leak: no droplet serving two VMs, 0 droplets and 0 VM keys at each fake once the VMs are deleted",
		func(func(string, string) *PoolRun) (bool, string) {
			var bad []string
			for _, r := range rs {
				if r.Aborted || r.TwoVMDroplets > 0 || r.DropletsLeft > 0 || r.KeysLeft > 0 {
					bad = append(bad, fmt.Sprintf("%s/%s: %d droplets, %d keys left, %d with two VMs' tags%s",
						r.Side, r.Trace, r.DropletsLeft, r.KeysLeft, r.TwoVMDroplets, map[bool]string{true: " (aborted)"}[r.Aborted]))
				}
			}
			if len(bad) > 0 {
				return false, strings.Join(bad, "; ")
			}
			return true, fmt.Sprintf("every run (%d)", len(rs))
		})
	return out
}

// poolTarget skips a target whose runs are missing, fails one whose run was
// aborted, else measures it. Runs missing beyond needs are left out by the
// measure itself (eachTrace).
func poolTarget(rs poolRuns, name string, needs [][2]string, measure func(get func(side, trace string) *PoolRun) (bool, string)) Target {
	for _, n := range needs {
		r := rs.get(n[0], n[1])
		if r == nil {
			return Target{Name: name, Status: Skip, Detail: fmt.Sprintf("%s/%s was not run", n[0], n[1])}
		}
		if r.Aborted {
			return Target{Name: name, Status: Fail, Detail: fmt.Sprintf("%s/%s was aborted", n[0], n[1])}
		}
	}
	return verdict(name, func() (bool, string) { return measure(rs.get) })
}

// eachTrace checks the runs of side on traces that were run.
func eachTrace(get func(side, trace string) *PoolRun, side string, traces []string, check func(r *PoolRun) (bool, string)) (bool, string) {
	ok, parts := true, []string{}
	for _, t := range traces {
		if r := get(side, t); r != nil {
			good, why := check(r)
			ok = ok && good
			parts = append(parts, t+": "+why)
		}
	}
	return ok, strings.Join(parts, "; ")
}

// beforeStartOK: no pool droplet made earlier than start - poolLeadBound or
// within poolLeadBound of the event's creation (scaled with the trace), and
// the pool ready at the start: its size, or its wanted size with auto, at
// most the seats.
func beforeStartOK(r *PoolRun) (bool, string) {
	b := r.Before
	lead := poolLeadBound.Seconds() * r.scale()
	early := !math.IsNaN(float64(b.FirstPoolBeforeStart)) &&
		(float64(b.FirstPoolBeforeStart) > lead || float64(b.FirstPoolAfterCreation) < lead)
	want := r.poolSize()
	if want == 0 { // auto: what it sized itself to, which must be something
		want = max(b.WantedAtStart, 1)
	}
	want = min(want, r.Seats)
	ready := b.ReadyAtStart >= want
	return !early && ready, fmt.Sprintf("first pool droplet %s s after the creation, %s s before the start; ready %d of %d at the start",
		formatValue("%.0f", float64(b.FirstPoolAfterCreation)), formatValue("%.0f", float64(b.FirstPoolBeforeStart)), b.ReadyAtStart, want)
}

// poolSize is the fixed size, 0 for auto or no pool.
func (r *PoolRun) poolSize() int {
	var n int
	if _, err := fmt.Sscanf(r.WarmPool, "%d", &n); err != nil {
		return 0
	}
	return n
}

// scale is the trace's time scale, from its pre-start against PoolPreStart.
func (r *PoolRun) scale() float64 {
	if s := r.Start.Sub(r.EventCreated).Seconds(); s > 0 {
		return min(s/PoolPreStart.Seconds(), 1)
	}
	return 1
}

// allRan fails a run some of whose VMs never ran.
func allRan(r *PoolRun) (bool, string) {
	if r.Running < r.VMs {
		return false, fmt.Sprintf("only %d of %d VMs ran", r.Running, r.VMs)
	}
	return true, ""
}
