package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean/fake"
)

// lifeLog keeps every droplet's creation and deletion as the fake shows
// them, polled: DropletLives forgets a deleted droplet after the delete lag.
type lifeLog struct {
	do    *fake.Server
	token string

	mu    sync.Mutex
	lives map[int]*fake.DropletLife
}

func newLifeLog(do *fake.Server, token string) *lifeLog {
	return &lifeLog{do: do, token: token, lives: map[int]*fake.DropletLife{}}
}

func (l *lifeLog) poll(ctx context.Context) {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		l.observe(time.Now())
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (l *lifeLog) observe(now time.Time) {
	seen := map[int]bool{}
	lives := l.do.DropletLives(l.token)
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, d := range lives {
		seen[d.ID] = true
		if known := l.lives[d.ID]; known == nil || known.Deleted.IsZero() {
			l.lives[d.ID] = &d
		}
	}
	for id, d := range l.lives {
		if !seen[id] && d.Deleted.IsZero() {
			d.Deleted = now // purged between two polls: now is an upper bound
		}
	}
}

// poolSeconds sums the pool droplets' unclaimed lifetimes up to now: from
// creation to the claim (claimedAt by droplet ID) or deletion.
func (l *lifeLog) poolSeconds(claimedAt map[int]time.Time, now time.Time) float64 {
	l.observe(now)
	return l.sum(claimedAt, now)
}

// sum is poolSeconds over what was observed so far.
func (l *lifeLog) sum(claimedAt map[int]time.Time, now time.Time) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	total := 0.0
	for id, d := range l.lives {
		if !isPoolDroplet(d.Name) {
			continue
		}
		end := now
		if at, ok := claimedAt[id]; ok {
			end = at
		} else if !d.Deleted.IsZero() {
			end = d.Deleted
		}
		total += max(end.Sub(d.Created).Seconds(), 0)
	}
	return total
}

// poolCosts compares every steady pool side with the side without a pool.
func poolCosts(sides []PoolSide) []PoolCost {
	if len(sides) == 0 || sides[0].WarmPool != 0 {
		return nil
	}
	base := sides[0]
	var out []PoolCost
	for _, s := range sides[1:] {
		if s.Overflow {
			continue // other arrivals: no VM-by-VM comparison
		}
		saved := 0.0
		for i := range min(len(s.TTRs), len(base.TTRs)) {
			a, b := float64(base.TTRs[i]), float64(s.TTRs[i])
			if !math.IsNaN(a) && !math.IsNaN(b) {
				saved += a - b
			}
		}
		out = append(out, PoolCost{Side: s.Name, PoolDropletHours: s.PoolDropletSeconds / 3600, WaitSavedHours: saved / 3600})
	}
	return out
}

// EvaluateWarmPool checks issue 18's benchmark targets: the first side has
// no pool, the last is the overflow, those between are steady pool sides.
func EvaluateWarmPool(sides []PoolSide, interval time.Duration) []Target {
	if len(sides) < 3 || sides[0].WarmPool != 0 || !sides[len(sides)-1].Overflow {
		return []Target{{Name: "warm-pool targets", Status: Skip, Detail: "the run did not finish its sides"}}
	}
	base, steady, overflow := &sides[0], sides[1:len(sides)-1], &sides[len(sides)-1]
	allRan := func(s *PoolSide) (bool, string) {
		if s.Running < s.VMs {
			return false, fmt.Sprintf("only %d of %d VMs ran", s.Running, s.VMs)
		}
		return true, ""
	}
	var out []Target
	for i := range steady {
		s := &steady[i]
		out = append(out, checkSides(fmt.Sprintf("p95 time-to-running ≤ 2 s with warm_pool %d (%d VMs, one every %v)", s.WarmPool, s.VMs, interval),
			[]*PoolSide{s}, func() (bool, string) {
				if ok, why := allRan(s); !ok {
					return false, why
				}
				return s.TTR.P95 <= maxPoolTTRP95, fmt.Sprintf("%.2f s (%d claims of %d VMs)", s.TTR.P95, s.Claims, s.VMs)
			}))
	}
	out = append(out, checkSides(fmt.Sprintf("p95 time-to-running ≥ the boot delay (%v) without a pool", BootDelay), []*PoolSide{base},
		func() (bool, string) {
			if ok, why := allRan(base); !ok {
				return false, why
			}
			return base.TTR.P95 >= BootDelay.Seconds(), fmt.Sprintf("%.2f s", base.TTR.P95)
		}))
	out = append(out, checkSides(fmt.Sprintf("overflow (%d VMs in %.0f s): the first %d from the pool, the rest by the normal path, no errors",
		overflow.VMs, overflow.Window, overflow.WarmPool), []*PoolSide{overflow}, func() (bool, string) {
		if ok, why := allRan(overflow); !ok {
			return false, why
		}
		detail := fmt.Sprintf("%d claims, %d of the first %d, %d errored", overflow.Claims, overflow.FirstClaimed, overflow.WarmPool, len(overflow.Errors))
		return overflow.FirstClaimed == overflow.WarmPool && overflow.Claims >= overflow.WarmPool && len(overflow.Errors) == 0, detail
	}))
	refs := make([]*PoolSide, len(sides))
	for i := range sides {
		refs[i] = &sides[i]
	}
	out = append(out, checkSides("no duplicate, no leak on any side: DigitalOcean holds the VMs' droplets + the pool's, none with two VMs' tags",
		refs, func() (bool, string) {
			var bad []string
			for i := range sides {
				s := &sides[i]
				if s.TwoVMDroplets > 0 || s.DropletsAtEnd != s.VMs+s.WantedAtEnd {
					bad = append(bad, fmt.Sprintf("%s: %d droplets for %d VMs + %d pool, %d with two VMs' tags",
						s.Name, s.DropletsAtEnd, s.VMs, s.WantedAtEnd, s.TwoVMDroplets))
				}
			}
			if len(bad) > 0 {
				return false, strings.Join(bad, "; ")
			}
			return true, "every side"
		}))
	return out
}

// checkSides builds a Target as check does, from the sides it uses: Fail if
// one was aborted, else what measure says.
func checkSides(name string, uses []*PoolSide, measure func() (bool, string)) Target {
	for _, s := range uses {
		if s.Aborted {
			return Target{Name: name, Status: Fail, Detail: fmt.Sprintf("the side %q was aborted", s.Name)}
		}
	}
	return verdict(name, measure)
}

// WriteWarmPool prints the sides side by side, the cost comparison and the targets.
func WriteWarmPool(w io.Writer, rep *WarmPoolReport) {
	fmt.Fprintf(w, "warm pool (issue 18): scale 1 (real time), boot delay %v, ssh_key_scope %s\n", BootDelay, rep.KeyScope)
	fmt.Fprintf(w, "machine: %s\n", rep.Machine)
	loads := make([]string, len(rep.LoadAverages))
	for i, l := range rep.LoadAverages {
		loads[i] = fmt.Sprintf("%.1f", l)
	}
	fmt.Fprintf(w, "load average (1 min) at start and after each side: %s\n\n", strings.Join(loads, ", "))
	header := []string{""}
	for _, s := range rep.Sides {
		header = append(header, s.Name)
	}
	lines := [][]string{header}
	add := func(label string, f func(s *PoolSide) string) {
		line := []string{label}
		for i := range rep.Sides {
			line = append(line, f(&rep.Sides[i]))
		}
		lines = append(lines, line)
	}
	add("VMs, arrival window (s)", func(s *PoolSide) string { return fmt.Sprintf("%d in %.1f", s.VMs, s.Window) })
	add("pool filled after (s)", func(s *PoolSide) string { return formatValue("%.1f", float64(s.FillSeconds)) })
	add("VMs running", func(s *PoolSide) string { return fmt.Sprintf("%d", s.Running) })
	add("time-to-running p50 (s)", func(s *PoolSide) string { return formatValue("%.2f", orNaN(s.TTR, s.TTR.P50)) })
	add("time-to-running p95 (s)", func(s *PoolSide) string { return formatValue("%.2f", orNaN(s.TTR, s.TTR.P95)) })
	add("time-to-running max (s)", func(s *PoolSide) string { return formatValue("%.2f", orNaN(s.TTR, s.TTR.Max)) })
	add("claims (of the first k)", func(s *PoolSide) string { return fmt.Sprintf("%d (%d)", s.Claims, s.FirstClaimed) })
	add("VMs in error", func(s *PoolSide) string { return fmt.Sprintf("%d", len(s.Errors)) })
	add("droplets at end / VMs + pool", func(s *PoolSide) string {
		return fmt.Sprintf("%d / %d", s.DropletsAtEnd, s.VMs+s.WantedAtEnd)
	})
	add("droplets with two VMs' tags", func(s *PoolSide) string { return fmt.Sprintf("%d", s.TwoVMDroplets) })
	add("pool droplet-hours unclaimed", func(s *PoolSide) string { return fmt.Sprintf("%.3f", s.PoolDropletSeconds/3600) })
	add("pool drained after event end (s)", func(s *PoolSide) string { return formatValue("%.1f", float64(s.DrainSeconds)) })
	add("DO requests, all", func(s *PoolSide) string { return fmt.Sprintf("%d", sum(s.Requests)) })
	add("  POST /v2/droplets", func(s *PoolSide) string { return fmt.Sprintf("%d", s.Requests[fake.RouteCreateDroplets]) })
	add("429 responses", func(s *PoolSide) string { return fmt.Sprintf("%d", s.TooMany) })
	add("side real time (min)", func(s *PoolSide) string { return fmt.Sprintf("%.1f", s.RealSeconds/60) })
	writeAligned(w, lines)
	for _, s := range rep.Sides {
		for _, n := range s.Notes {
			fmt.Fprintf(w, "note (%s): %s\n", s.Name, n)
		}
	}
	if len(rep.Costs) > 0 {
		fmt.Fprintln(w, "\ncost: unclaimed pool droplet-hours against the users' waiting saved (Σ over VMs of no-pool minus pool time-to-running)")
		for _, c := range rep.Costs {
			ratio := "-"
			if c.PoolDropletHours > 0 {
				ratio = fmt.Sprintf("%.2f", c.WaitSavedHours/c.PoolDropletHours)
			}
			fmt.Fprintf(w, "  %s: %.3f droplet-hours for %.3f hours of waiting saved (%s h saved per droplet-hour)\n",
				c.Side, c.PoolDropletHours, c.WaitSavedHours, ratio)
		}
	}
	WriteTargets(w, rep.Targets)
}
