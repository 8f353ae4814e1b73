package bench

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
)

// lifeLog keeps every droplet's creation and deletion as the fake shows
// them, polled: DropletLives forgets a deleted droplet after the delete lag.
type lifeLog struct {
	do    *fakedo.Server
	token string

	mu    sync.Mutex
	lives map[int]*fakedo.DropletLife
}

func newLifeLog(do *fakedo.Server, token string) *lifeLog {
	return &lifeLog{do: do, token: token, lives: map[int]*fakedo.DropletLife{}}
}

// lifePollEvery is how often lifeLog looks: well within the fake's delete
// lag (2 s), after which a deleted droplet is forgotten; the fake's own
// timestamps time every create and delete.
const lifePollEvery = 500 * time.Millisecond

func (l *lifeLog) poll(ctx context.Context) {
	tick := time.NewTicker(lifePollEvery)
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

// firstPoolCreate is the first pool droplet's create (zero if none).
func (l *lifeLog) firstPoolCreate() time.Time {
	l.observe(time.Now())
	l.mu.Lock()
	defer l.mu.Unlock()
	var first time.Time
	for _, d := range l.lives {
		if isPoolDroplet(d.Name) && (first.IsZero() || d.Created.Before(first)) {
			first = d.Created
		}
	}
	return first
}

// lastPoolDelete is the last delete of an unclaimed pool droplet (zero if none).
func (l *lifeLog) lastPoolDelete(claimed map[int]bool) time.Time {
	l.observe(time.Now())
	l.mu.Lock()
	defer l.mu.Unlock()
	var last time.Time
	for id, d := range l.lives {
		if isPoolDroplet(d.Name) && !claimed[id] && d.Deleted.After(last) {
			last = d.Deleted
		}
	}
	return last
}

// warmPoolConfigKey is the Environment key that sizes the pool.
const warmPoolConfigKey = "warm_pool"

// isPoolDroplet tells a pool member's droplet by its name (hfdo-pool-<random>),
// which it keeps when a VM takes it.
func isPoolDroplet(name string) bool { return strings.HasPrefix(name, "hfdo-pool-") }

// WriteWarmPool prints the runs side by side, trace by trace, then the targets.
func WriteWarmPool(w io.Writer, rep *WarmPoolReport) {
	fmt.Fprintf(w, "warm pool: real time, boot %v, seed %d, trace scale %g, ssh_key_scope %s, %d runs at once in %.1f min\n",
		BootDelay, rep.Seed, rep.Scale, rep.KeyScope, len(rep.Runs), rep.RealSeconds/60)
	fmt.Fprintf(w, "machine: %s\n", rep.Machine)
	loads := make([]string, len(rep.LoadAverages))
	for i, l := range rep.LoadAverages {
		loads[i] = fmt.Sprintf("%.1f", l)
	}
	fmt.Fprintf(w, "load average (1 min), each minute: %s\n", strings.Join(loads, ", "))
	for _, t := range rep.Traces {
		var runs []*PoolRun
		for i := range rep.Runs {
			if rep.Runs[i].Trace == t.Name {
				runs = append(runs, &rep.Runs[i])
			}
		}
		if len(runs) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s: %d VMs, %d seats, event made %.0f s before its start, ends %.0f s after it\n",
			t.Name, t.VMs(), t.Seats, t.PreStart, t.End)
		writePoolRuns(w, runs)
	}
	for _, r := range rep.Runs {
		if said := r.Before.ControllerSaid; len(said) > 0 {
			fmt.Fprintf(w, "before the start (%s/%s), the pool's status said: %s\n", r.Side, r.Trace, strings.Join(said, "; then "))
		}
		for _, n := range r.Notes {
			fmt.Fprintf(w, "note (%s/%s): %s\n", r.Side, r.Trace, n)
		}
	}
	WriteTargets(w, rep.Targets)
}

func writePoolRuns(w io.Writer, runs []*PoolRun) {
	header := []string{""}
	for _, r := range runs {
		header = append(header, r.Side)
	}
	lines := [][]string{header}
	add := func(label string, f func(r *PoolRun) string) {
		line := []string{label}
		for _, r := range runs {
			line = append(line, f(r))
		}
		lines = append(lines, line)
	}
	add("VMs running", func(r *PoolRun) string { return fmt.Sprintf("%d of %d", r.Running, r.VMs) })
	add("time-to-running p50 / p95 / max (s)", func(r *PoolRun) string {
		return fmt.Sprintf("%s / %s / %s", formatValue("%.2f", orNaN(r.TTR, r.TTR.P50)),
			formatValue("%.2f", orNaN(r.TTR, r.TTR.P95)), formatValue("%.2f", orNaN(r.TTR, r.TTR.Max)))
	})
	add("waited a boot", func(r *PoolRun) string { return fmt.Sprintf("%d", r.WaitedBoot) })
	add("claims, p95 claim to running (s)", func(r *PoolRun) string {
		return fmt.Sprintf("%d, %s", r.Claims, formatValue("%.2f", orNaN(r.ClaimTTR, r.ClaimTTR.P95)))
	})
	add("first pool droplet after creation (s)", func(r *PoolRun) string {
		return formatValue("%.0f", float64(r.Before.FirstPoolAfterCreation))
	})
	add("pool ready / wanted at the start", func(r *PoolRun) string {
		return fmt.Sprintf("%d / %d", r.Before.ReadyAtStart, r.Before.WantedAtStart)
	})
	add("pool over seats left: most, longest (s)", func(r *PoolRun) string {
		return fmt.Sprintf("%d, %.0f", r.Seat.MaxOver, r.Seat.LongestOver)
	})
	add("pool droplet-hours (fake / metric)", func(r *PoolRun) string {
		return fmt.Sprintf("%.3f / %s", r.PoolDropletSeconds/3600, formatValue("%.3f", float64(r.MetricSeconds)/3600))
	})
	add("drained after the end (s)", func(r *PoolRun) string { return formatValue("%.1f", float64(r.DrainSeconds)) })
	add("DO requests (POST /v2/droplets)", func(r *PoolRun) string {
		return fmt.Sprintf("%d (%d)", r.RequestsTotal, r.Requests[fakedo.RouteCreateDroplets])
	})
	add("held back: create, pool; 429s", func(r *PoolRun) string {
		return fmt.Sprintf("%.0f, %.0f; %d", r.HeldBack["create"], r.HeldBack["pool"], r.TooMany)
	})
	add("left: droplets, keys; two-VM droplets", func(r *PoolRun) string {
		return fmt.Sprintf("%d, %d; %d", r.DropletsLeft, r.KeysLeft, r.TwoVMDroplets)
	})
	add("VMs in error", func(r *PoolRun) string { return fmt.Sprintf("%d", len(r.Errors)) })
	add("run's real time (min)", func(r *PoolRun) string { return fmt.Sprintf("%.1f", r.RealSeconds/60) })
	add("controller CPU (s), peak RSS (MiB)", func(r *PoolRun) string {
		return fmt.Sprintf("%.1f, %.0f", r.ControllerCPU, r.ControllerRSS)
	})
	writeAligned(w, lines)
}
