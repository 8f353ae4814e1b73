package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// LargeReport is a run of the large scenario.
type LargeReport struct {
	Config       LargeConfig `json:"config"`
	Machine      string      `json:"machine"`
	LoadAverages []float64   `json:"load_averages"`
	Result       LargeResult `json:"result"`
	Targets      []Target    `json:"targets"`
}

// Missed reports whether a target failed.
func (r *LargeReport) Missed() bool {
	return slices.ContainsFunc(r.Targets, func(t Target) bool { return t.Status == Fail })
}

// LargeResult is what the large scenario measured; times are simulated
// seconds at their phase's scale unless named real.
type LargeResult struct {
	VMs      int      `json:"vms"`
	Envs     int      `json:"envs"`
	Event    int      `json:"event"`
	NewEvent int      `json:"new_event"`
	KeyScope string   `json:"key_scope"`
	Notes    []string `json:"notes,omitempty"`
	Aborted  bool     `json:"aborted,omitempty"`

	BuildUpRunning  int  `json:"build_up_running"`
	BuildUpOverhead Dist `json:"build_up_overhead"`
	// SettleSeconds is how long (real) the event's controller took to
	// finish its start-up work on every object before the event began.
	SettleSeconds float64 `json:"settle_seconds"`

	// The hold: VMs running at its start, its simulated length, its
	// requests (all tokens) per VM per simulated hour.
	HoldVMs     int          `json:"hold_vms"`
	HoldSeconds float64      `json:"hold_seconds"`
	HoldWindow  [2]time.Time `json:"-"`
	PerVMHour   Num          `json:"per_vm_hour"`

	// The new event, on the first Environment, and the busy one: the second
	// Environment's VMs, all deleted meanwhile. Overlap is the share of the
	// new event's start (its first create to its last droplet created at
	// DigitalOcean) during which the deletes ran (their first delete to
	// their last droplet gone).
	NewEventRunning  int          `json:"new_event_running"`
	NewEventOverhead Dist         `json:"new_event_overhead"`
	BusyVMs          int          `json:"busy_vms"`
	BusyDelete       Dist         `json:"busy_delete"`
	BusyMissing      int          `json:"busy_missing"`
	Overlap          float64      `json:"overlap"`
	GoneBeforeDelete int          `json:"gone_before_delete"`
	EventWindow      [2]time.Time `json:"-"`

	Tokens      []LargeToken    `json:"tokens"`
	Phases      []LargePhase    `json:"phases"`
	Controllers []ControllerRun `json:"controllers"`

	PeakRSSMiB   float64 `json:"peak_rss_mib"`
	CPUSeconds   float64 `json:"cpu_seconds"` // the controllers', summed
	APIServerCPU float64 `json:"apiserver_cpu"`
	EtcdCPU      float64 `json:"etcd_cpu"`
	KubeRequests float64 `json:"kube_requests"`
	KubeWrites   float64 `json:"kube_writes"`

	Droplets    int     `json:"droplets"`   // created at the fake for the scenario's VMs
	Duplicates  int     `json:"duplicates"` // VMs with more than one droplet
	Leaked      int     `json:"leaked"`     // live droplets at the end of no VM that should run
	RealSeconds float64 `json:"real_seconds"`
}

// LargeToken is one Environment's token.
type LargeToken struct {
	Env      string `json:"env"`
	VMs      int    `json:"vms"` // built up
	Requests int    `json:"requests"`
	TooMany  int    `json:"too_many"`
	// HoldRequests and PerVMHour are of the hold.
	HoldRequests int `json:"hold_requests"`
	PerVMHour    Num `json:"per_vm_hour"`
	// EventRequests are the new event phase's; EventStarted the overhead of
	// the VMs it started on this token, EventDeleted the delete-to-gone of
	// those it deleted.
	EventRequests int  `json:"event_requests"`
	EventStarted  Dist `json:"event_started"`
	EventDeleted  Dist `json:"event_deleted"`
}

// LargePhase is one controller process's phase: its real length and the
// CPU seconds each process used in it.
type LargePhase struct {
	Name          string  `json:"name"`
	Scale         float64 `json:"scale"`
	RealSeconds   float64 `json:"real_seconds"`
	ControllerCPU float64 `json:"controller_cpu"`
	APIServerCPU  float64 `json:"apiserver_cpu"`
	EtcdCPU       float64 `json:"etcd_cpu"`
	BenchCPU      float64 `json:"bench_cpu"` // this program: Gargantua, the fake, the tracker
	Requests      int     `json:"requests"`  // DigitalOcean's, every token
}

// The large installation's goals: memory bounded at 10,000 VMs, a cheap
// steady state, and a new event as fast as on a small installation.
const (
	maxLargeRSSMiB        = 400
	maxLargePerVMHour     = 0.5
	maxNewEventOverhead   = 3.0 // simulated seconds
	largeTargetsAreOnRuns = "the large scenario was aborted"
)

// EvaluateLarge checks the large scenario's targets.
func EvaluateLarge(r *LargeResult) []Target {
	eventDetail := func() (bool, string) {
		d := fmt.Sprintf("%.2f s (%d of %d ran)", r.NewEventOverhead.P95, r.NewEventRunning, r.NewEvent)
		return r.NewEventRunning == r.NewEvent && r.NewEventOverhead.P95 <= maxNewEventOverhead, d
	}
	return []Target{
		largeCheck(r, fmt.Sprintf("peak controller RSS ≤ %d MiB", maxLargeRSSMiB), func() (bool, string) {
			return r.PeakRSSMiB <= maxLargeRSSMiB, fmt.Sprintf("%.1f MiB for %d VMs", r.PeakRSSMiB, r.VMs)
		}),
		largeCheck(r, "steady DO requests per VM-hour ≤ 0.5 (every token's hold requests / every VM)", func() (bool, string) {
			if r.HoldVMs == 0 {
				return false, "no hold measured (-large-hold 0)"
			}
			return float64(r.PerVMHour) <= maxLargePerVMHour, fmt.Sprintf("%.3f (%d VMs, %.0f simulated min)",
				float64(r.PerVMHour), r.HoldVMs, r.HoldSeconds/60)
		}),
		largeCheck(r, "the new event's p95 time-to-running overhead ≤ 3 s", eventDetail),
		largeCheck(r, "no token has 429s", func() (bool, string) {
			var with []string
			for _, t := range r.Tokens {
				if t.TooMany > 0 {
					with = append(with, fmt.Sprintf("%s %d", t.Env, t.TooMany))
				}
			}
			if len(with) == 0 {
				return len(r.Tokens) > 0, fmt.Sprintf("0 on each of %d tokens", len(r.Tokens))
			}
			return false, strings.Join(with, ", ")
		}),
		largeCheck(r, "no token's work delayed by another's: the new event ≤ 3 s while another token deletes its event at the GC's pace, whose p95 delete-to-gone ≤ 15 s",
			func() (bool, string) {
				ok, event := eventDetail()
				d := r.BusyDelete
				detail := fmt.Sprintf("new event %s; busy token: %d deletes, p95 %.2f s, %d never went, %d VMs gone from Kubernetes first; overlap %.0f%%",
					event, d.Count, d.P95, r.BusyMissing, r.GoneBeforeDelete, 100*r.Overlap)
				return ok && r.Overlap > 0 && d.Count > 0 && d.P95 <= maxDeleteAllP95At1000 &&
					r.BusyMissing == 0 && r.GoneBeforeDelete == 0, detail
			}),
		largeCheck(r, "no duplicate, no leak", func() (bool, string) {
			return r.Duplicates == 0 && r.Leaked == 0, fmt.Sprintf("%d VMs with two droplets, %d live droplets of no running VM", r.Duplicates, r.Leaked)
		}),
	}
}

// largeCheck is a target on the large scenario: Fail when it was aborted.
func largeCheck(r *LargeResult, name string, measure func() (bool, string)) Target {
	if r.Aborted {
		return Target{Name: name, Status: Fail, Detail: largeTargetsAreOnRuns}
	}
	return verdict(name, measure)
}

// WriteLarge prints the large scenario's figures, its tokens, its phases'
// CPU and its targets.
func WriteLarge(w io.Writer, rep *LargeReport) {
	c, r := rep.Config, &rep.Result
	fmt.Fprintf(w, "large installation: %d VMs across %d Environments (one token each), waves of %d per Environment, then a new event of %d\n",
		c.VMs, c.Envs, c.Event, c.NewEvent)
	fmt.Fprintf(w, "scales (simulated s per real s): build-up %g, hold %g, new event %g; times simulated at their phase's scale; ssh_key_scope %s\n",
		c.BuildScale, c.HoldScale, c.EventScale, c.KeyScope)
	fmt.Fprintf(w, "machine: %s\n", rep.Machine)
	loads := make([]string, len(rep.LoadAverages))
	for i, l := range rep.LoadAverages {
		loads[i] = fmt.Sprintf("%.1f", l)
	}
	fmt.Fprintf(w, "load average (1 min) at start and end: %s\n\n", strings.Join(loads, ", "))

	cp := r.CPUSeconds + r.APIServerCPU + r.EtcdCPU
	perVM := func(x float64) string { return formatValue("%.4f", x/float64(max(r.VMs, 1))) }
	writeAligned(w, [][]string{
		{"figure", "value"},
		{"build-up: VMs running", fmt.Sprintf("%d of %d", r.BuildUpRunning, r.VMs)},
		{"  time-to-running overhead p95 (s)", formatValue("%.2f", orNaN(r.BuildUpOverhead, r.BuildUpOverhead.P95))},
		{"hold: VMs, simulated min", fmt.Sprintf("%d, %.0f", r.HoldVMs, r.HoldSeconds/60)},
		{"  steady requests / VM-hour", formatValue("%.3f", float64(r.PerVMHour))},
		{"event controller's start-up work before the event (real s)", fmt.Sprintf("%.1f", r.SettleSeconds)},
		{"new event: VMs running", fmt.Sprintf("%d of %d", r.NewEventRunning, r.NewEvent)},
		{"  time-to-running overhead p50 / p95 / max (s)", fmt.Sprintf("%s / %s / %s", formatValue("%.2f", orNaN(r.NewEventOverhead, r.NewEventOverhead.P50)),
			formatValue("%.2f", orNaN(r.NewEventOverhead, r.NewEventOverhead.P95)), formatValue("%.2f", orNaN(r.NewEventOverhead, r.NewEventOverhead.Max)))},
		{"busy token: VMs deleted meanwhile", fmt.Sprintf("%d of %d (%d never went)", r.BusyDelete.Count, r.BusyVMs, r.BusyMissing)},
		{"  delete-to-gone p95 / max (s)", fmt.Sprintf("%s / %s", formatValue("%.2f", orNaN(r.BusyDelete, r.BusyDelete.P95)), formatValue("%.2f", orNaN(r.BusyDelete, r.BusyDelete.Max)))},
		{"  VMs gone from Kubernetes before DO took the delete", fmt.Sprintf("%d", r.GoneBeforeDelete)},
		{"  overlap with the new event's start", fmt.Sprintf("%.0f%%", 100*r.Overlap)},
		{"droplets created / VMs with two / leaked", fmt.Sprintf("%d / %d / %d", r.Droplets, r.Duplicates, r.Leaked)},
		{"controller peak RSS (MiB)", fmt.Sprintf("%.1f", r.PeakRSSMiB)},
		{"  per VM (KiB)", formatValue("%.1f", r.PeakRSSMiB*1024/float64(max(r.VMs, 1)))},
		{"controller CPU (s), per VM", fmt.Sprintf("%.1f, %s", r.CPUSeconds, perVM(r.CPUSeconds))},
		{"kube-apiserver CPU (s), share of the three", fmt.Sprintf("%.1f, %s", r.APIServerCPU, cpuShare(r.APIServerCPU, cp))},
		{"etcd CPU (s), share of the three", fmt.Sprintf("%.1f, %s", r.EtcdCPU, cpuShare(r.EtcdCPU, cp))},
		{"kube-apiserver CPU / controller CPU", formatValue("%.2f", r.APIServerCPU/r.CPUSeconds)},
		{"kube-apiserver requests, writes", fmt.Sprintf("%.0f, %.0f", r.KubeRequests, r.KubeWrites)},
		{"scenario real time (min)", fmt.Sprintf("%.1f", r.RealSeconds/60)},
	})

	fmt.Fprintln(w, "\nby token (each Environment's own)")
	lines := [][]string{{"env", "VMs", "DO requests", "429s", "hold requests", "/ VM-hour", "new event phase requests", "started p95 (s)", "deleted p95 (s)"}}
	for _, t := range r.Tokens {
		lines = append(lines, []string{t.Env, fmt.Sprint(t.VMs), fmt.Sprint(t.Requests), fmt.Sprint(t.TooMany), fmt.Sprint(t.HoldRequests),
			formatValue("%.3f", float64(t.PerVMHour)), fmt.Sprint(t.EventRequests),
			formatValue("%.2f", orNaN(t.EventStarted, t.EventStarted.P95)), formatValue("%.2f", orNaN(t.EventDeleted, t.EventDeleted.P95))})
	}
	writeAligned(w, lines)

	fmt.Fprintln(w, "\nCPU by phase (real seconds; cores = CPU s / real s, of nproc)")
	lines = [][]string{{"phase", "scale", "real s", "controller", "kube-apiserver", "etcd", "this program", "apiserver cores", "all cores", "DO requests"}}
	for _, p := range r.Phases {
		all := p.ControllerCPU + p.APIServerCPU + p.EtcdCPU + p.BenchCPU
		lines = append(lines, []string{p.Name, fmt.Sprintf("%g", p.Scale), fmt.Sprintf("%.0f", p.RealSeconds),
			fmt.Sprintf("%.1f", p.ControllerCPU), fmt.Sprintf("%.1f", p.APIServerCPU), fmt.Sprintf("%.1f", p.EtcdCPU), fmt.Sprintf("%.1f", p.BenchCPU),
			formatValue("%.2f", p.APIServerCPU/p.RealSeconds), formatValue("%.2f", all/p.RealSeconds), fmt.Sprint(p.Requests)})
	}
	writeAligned(w, lines)
	for _, note := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", note)
	}
	WriteTargets(w, rep.Targets)
}
