package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// Result is what one scenario (one mode at one N) measured. Times are in
// simulated seconds unless named real.
type Result struct {
	Mode     Mode   `json:"mode"`
	N        int    `json:"n"`
	KeyScope string `json:"key_scope"` // the ssh_key_scope in effect
	// Path is how the flood's VMs were made (claim when empty).
	Path Path `json:"path,omitempty"`
	// ReadyCheck is the Environment's ready_check; empty left it unset (ssh).
	ReadyCheck string `json:"ready_check,omitempty"`
	// SSHDelay is the fake's sshd start-up after active, simulated seconds.
	SSHDelay float64 `json:"ssh_delay,omitempty"`
	// Reachable counts the flood's Droplets by their Reachable condition
	// after the flood ("True/LoggedIn", "True/NotChecked"): which check ran.
	Reachable map[string]int `json:"reachable,omitempty"`
	// FloodScale is the scale (simulated s per real s) of set up, probes,
	// flood and waiting for all running; HoldScale that of the hold, the
	// delete of all N and the rest. Each figure is converted at the scale
	// of the phase it was measured in.
	FloodScale float64 `json:"flood_scale"`
	HoldScale  float64 `json:"hold_scale"`
	// Notes say what did not go as planned (timeouts, fallbacks).
	Notes []string `json:"notes,omitempty"`
	// Aborted means the scenario did not finish: its figures are partial.
	Aborted bool `json:"aborted,omitempty"`

	// Running counts the flood's VMs that ran before waiting gave up, or,
	// if it did, by the end of the hold.
	Running int `json:"running"`
	// Overhead is time-to-running minus the boot delay: BeforeCreate (VM
	// ready to droplet created at the fake: queueing and Kubernetes work)
	// plus AfterActive (droplet active to VM running: detection).
	Overhead     Dist `json:"overhead"`
	BeforeCreate Dist `json:"before_create"`
	AfterActive  Dist `json:"after_active"`
	// Wall is from the flood's first create to its last VM running.
	Wall  Num     `json:"wall"` // unknown unless all ran
	Floor float64 `json:"floor"`

	// Requests counts DigitalOcean requests of the whole scenario by
	// endpoint, whatever their status; TooMany counts the 429s among them.
	Requests map[string]int `json:"requests"`
	TooMany  int            `json:"too_many"`
	// HoldRequests are the requests of the steady state, HoldSeconds long.
	HoldRequests map[string]int `json:"hold_requests"`
	HoldSeconds  float64        `json:"hold_seconds"`
	// PerVMHour is the hold's requests per flood VM per simulated hour.
	PerVMHour Num `json:"per_vm_hour"`
	// LifecycleRequests are the scenario's requests outside the hold (the
	// probes, the flood, the deletes: creating, keying, observing and
	// deleting VMs), by endpoint; LifecycleVMs the VMs it made (probes and
	// flood), PerVMLifecycle the one over the other.
	LifecycleRequests map[string]int `json:"lifecycle_requests"`
	LifecycleVMs      int            `json:"lifecycle_vms"`
	PerVMLifecycle    Num            `json:"per_vm_lifecycle"`

	// PeakRSSMiB is the larger of the two controllers' peaks, CPUSeconds the
	// sum of their real CPU time.
	PeakRSSMiB float64 `json:"peak_rss_mib"`
	CPUSeconds float64 `json:"cpu_seconds"`
	// HeldBack is the controllers' own count of requests their limiters held
	// back (hf_do_requests_held_back_total, both summed); NaN when they have none.
	HeldBack Num `json:"held_back"`
	// Controllers are the flood's controller process and the hold's.
	Controllers []ControllerRun `json:"controllers"`

	// Delete times run from the VM's deletion to the droplet's at the fake:
	// while idle, during the flood, and of all N after the hold.
	DeleteIdle  Dist `json:"delete_idle"`
	DeleteFlood Dist `json:"delete_flood"`
	DeleteAll   Dist `json:"delete_all"`
	// Deletes whose droplet was still there at the deadline.
	DeleteIdleMissing  int `json:"delete_idle_missing"`
	DeleteFloodMissing int `json:"delete_flood_missing"`
	DeleteAllMissing   int `json:"delete_all_missing"`
	// GoneBeforeDelete counts VMs that left Kubernetes (their finalizers
	// released) before DigitalOcean accepted the delete of their droplet.
	GoneBeforeDelete int `json:"gone_before_delete"`
	// EventEnd is what the delete of all N cost DigitalOcean and left there.
	EventEnd EventEnd `json:"event_end"`

	// Region is the Environment's region setting; with a list, ByRegion
	// counts the droplets made in each once all ran, and RefusedCreates
	// the creates DigitalOcean refused (422) meanwhile: a sold-out
	// region's cost, each a request of the token's budget.
	Region         string         `json:"region,omitempty"`
	SellOut        *SellOut       `json:"sell_out,omitempty"`
	ByRegion       map[string]int `json:"by_region,omitempty"`
	RefusedCreates int            `json:"refused_creates,omitempty"`

	Droplets   int `json:"droplets"`   // droplets created at the fake
	Duplicates int `json:"duplicates"` // VMs that got more than one droplet
	Keys       int `json:"keys"`       // SSH keys at the fake after the flood

	// KubeRequests counts kube-apiserver requests during the scenario (from
	// the probes on), KubeWrites the mutating ones among them.
	KubeRequests float64 `json:"kube_requests"`
	KubeWrites   float64 `json:"kube_writes"`
	// Real CPU seconds of the control plane during the scenario.
	APIServerCPU float64 `json:"apiserver_cpu"`
	EtcdCPU      float64 `json:"etcd_cpu"`
	RealSeconds  float64 `json:"real_seconds"`
	// FloodRealSeconds runs from the start to the end of waiting for all
	// running; RestartSeconds from reading the flood's controller to the
	// hold's controller being ready.
	FloodRealSeconds float64 `json:"flood_real_seconds"`
	RestartSeconds   float64 `json:"restart_seconds"`
}

// ControllerRun is one controller process of a scenario, read just before
// it was stopped (the hold's: before the namespace was deleted).
type ControllerRun struct {
	Phase      string  `json:"phase"` // flood or hold
	PeakRSSMiB float64 `json:"peak_rss_mib"`
	CPUSeconds float64 `json:"cpu_seconds"`
	HeldBack   Num     `json:"held_back"`
	// RealSeconds is from ready to read; StopSeconds from SIGTERM to exit
	// (the flood's only).
	RealSeconds float64 `json:"real_seconds"`
	StopSeconds float64 `json:"stop_seconds,omitempty"`
}

// combineRuns is the peak RSS over the runs, and their CPU seconds and held
// back requests summed (NaN if no run has that metric).
func combineRuns(runs []ControllerRun) (peakRSS, cpu float64, heldBack Num) {
	held, found := 0.0, false
	for _, r := range runs {
		peakRSS = max(peakRSS, r.PeakRSSMiB)
		cpu += r.CPUSeconds
		if !math.IsNaN(float64(r.HeldBack)) {
			held, found = held+float64(r.HeldBack), true
		}
	}
	if !found {
		return peakRSS, cpu, Num(nan)
	}
	return peakRSS, cpu, Num(held)
}

// Num is a float64 that may be unknown (NaN), which JSON shows as null.
type Num float64

// MarshalJSON implements json.Marshaler.
func (n Num) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(n))
}

// Report is a whole run.
type Report struct {
	// HoldScale is the scale of the hold and after; FloodScales that of
	// the flood phases, by N.
	HoldScale   float64         `json:"hold_scale"`
	FloodScales map[int]float64 `json:"flood_scales"`
	// BaselineFloodScales are the baseline's where they differ, by N.
	BaselineFloodScales map[int]float64 `json:"baseline_flood_scales,omitempty"`
	HoldSeconds         float64         `json:"hold_seconds"`
	// CreatesInFlight and DeletesInFlight are the simulated Gargantua's.
	CreatesInFlight int    `json:"creates_in_flight"`
	DeletesInFlight int    `json:"deletes_in_flight"`
	Machine         string `json:"machine"`
	// LoadAverages are the 1-minute load at the start and after each scenario.
	LoadAverages []float64 `json:"load_averages"`
	Warnings     []string  `json:"warnings,omitempty"`
	Results      []Result  `json:"results"`
	Targets      []Target  `json:"targets"`
}

// Missed reports whether a target failed.
func (r *Report) Missed() bool {
	return slices.ContainsFunc(r.Targets, func(t Target) bool { return t.Status == Fail })
}

// row is one line of a side-by-side table.
type row struct {
	label  string
	format string // for fmt, e.g. "%.1f"
	value  func(r *Result) float64
	// noRatio marks rows whose ours/baseline quotient means nothing.
	noRatio bool
}

var nan = math.NaN()

func distRows(label string, d func(r *Result) Dist) []row {
	return []row{
		{label: label + " p50 (s)", format: "%.2f", value: func(r *Result) float64 { return orNaN(d(r), d(r).P50) }},
		{label: label + " p95 (s)", format: "%.2f", value: func(r *Result) float64 { return orNaN(d(r), d(r).P95) }},
		{label: label + " max (s)", format: "%.2f", value: func(r *Result) float64 { return orNaN(d(r), d(r).Max) }},
	}
}

func orNaN(d Dist, v float64) float64 {
	if d.Count == 0 {
		return nan
	}
	return v
}

func tableRows(endpoints, lifecycleEndpoints, eventEndEndpoints []string) []row {
	rows := []row{
		{label: "VMs running", format: "%.0f", noRatio: true, value: func(r *Result) float64 { return float64(r.Running) }},
	}
	rows = append(rows, distRows("time-to-running overhead", func(r *Result) Dist { return r.Overhead })...)
	rows = append(rows,
		row{label: "  of it before the DO create, p95 (s)", format: "%.2f", value: func(r *Result) float64 { return orNaN(r.BeforeCreate, r.BeforeCreate.P95) }},
		row{label: "  of it after DO active, p95 (s)", format: "%.2f", value: func(r *Result) float64 { return orNaN(r.AfterActive, r.AfterActive.P95) }},
		row{label: "wall time to all running (min)", format: "%.2f", value: func(r *Result) float64 { return float64(r.Wall) / 60 }},
		row{label: "  / rate-limit floor", format: "%.2f", value: func(r *Result) float64 { return float64(r.Wall) / r.Floor }},
		row{label: "DO requests, all", format: "%.0f", value: func(r *Result) float64 { return float64(sum(r.Requests)) }},
	)
	for _, e := range endpoints {
		rows = append(rows, row{label: "  " + e, format: "%.0f", value: func(r *Result) float64 { return float64(r.Requests[e]) }})
	}
	rows = append(rows,
		row{label: "429 responses", format: "%.0f", value: func(r *Result) float64 { return float64(r.TooMany) }},
		row{label: "held back by the client limiter", format: "%.0f", value: func(r *Result) float64 { return float64(r.HeldBack) }},
		row{label: "steady-state requests / VM-hour", format: "%.3f", value: func(r *Result) float64 { return float64(r.PerVMHour) }},
		row{label: "DO requests per VM lifecycle (all but the hold)", format: "%.2f", value: func(r *Result) float64 { return float64(r.PerVMLifecycle) }},
	)
	for _, e := range lifecycleEndpoints {
		rows = append(rows, row{label: "  " + e, format: "%.0f", value: func(r *Result) float64 { return float64(r.LifecycleRequests[e]) }})
	}
	rows = append(rows,
		row{label: "droplets created", format: "%.0f", noRatio: true, value: func(r *Result) float64 { return float64(r.Droplets) }},
		row{label: "  VMs with more than one droplet", format: "%.0f", noRatio: true, value: func(r *Result) float64 { return float64(r.Duplicates) }},
		row{label: "creates refused (422), a region list's", format: "%.0f", noRatio: true, value: func(r *Result) float64 { return float64(r.RefusedCreates) }},
		row{label: "SSH keys at DO after the flood", format: "%.0f", value: func(r *Result) float64 { return float64(r.Keys) }},
		row{label: "controller peak RSS (MiB)", format: "%.1f", value: func(r *Result) float64 { return r.PeakRSSMiB }},
		row{label: "controller CPU (s)", format: "%.1f", value: func(r *Result) float64 { return r.CPUSeconds }},
		row{label: "kube-apiserver requests", format: "%.0f", value: func(r *Result) float64 { return r.KubeRequests }},
		row{label: "  writes", format: "%.0f", value: func(r *Result) float64 { return r.KubeWrites }},
		row{label: "kube-apiserver CPU (s)", format: "%.1f", noRatio: true, value: func(r *Result) float64 { return r.APIServerCPU }},
		row{label: "etcd CPU (s)", format: "%.1f", noRatio: true, value: func(r *Result) float64 { return r.EtcdCPU }},
	)
	rows = append(rows, distRows("delete-to-gone idle", func(r *Result) Dist { return r.DeleteIdle })[1:2]...)
	rows = append(rows, distRows("delete-to-gone in flood", func(r *Result) Dist { return r.DeleteFlood })[1:2]...)
	rows = append(rows, row{label: "  flood / idle", format: "%.2f", noRatio: true, value: func(r *Result) float64 {
		return orNaN(r.DeleteIdle, r.DeleteFlood.P95/r.DeleteIdle.P95)
	}})
	rows = append(rows, distRows("delete-to-gone, all N", func(r *Result) Dist { return r.DeleteAll })[1:]...)
	rows = append(rows, row{label: "VMs gone from Kubernetes before DO took the delete", format: "%.0f", noRatio: true,
		value: func(r *Result) float64 { return float64(r.GoneBeforeDelete) }})
	rows = append(rows, eventEndRows(eventEndEndpoints)...)
	rows = append(rows,
		row{label: "scenario real time (min)", format: "%.1f", noRatio: true, value: func(r *Result) float64 { return r.RealSeconds / 60 }},
		row{label: "  of it up to all running (min)", format: "%.1f", noRatio: true, value: func(r *Result) float64 { return r.FloodRealSeconds / 60 }},
		row{label: "  controller restart (real s)", format: "%.1f", noRatio: true, value: func(r *Result) float64 { return r.RestartSeconds }},
	)
	return rows
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// WriteTables prints one side-by-side table per N, modes as columns and, when
// both modes ran, their ratio ours/baseline.
func WriteTables(w io.Writer, rep *Report) {
	var flood []string
	for _, n := range slices.Sorted(maps.Keys(rep.FloodScales)) {
		flood = append(flood, fmt.Sprintf("%g at N=%d", rep.FloodScales[n], n))
	}
	for _, n := range slices.Sorted(maps.Keys(rep.BaselineFloodScales)) {
		flood = append(flood, fmt.Sprintf("the baseline's %g at N=%d", rep.BaselineFloodScales[n], n))
	}
	fmt.Fprintf(w, "scales (simulated s per real s): flood phases (set up, probes, flood, all running) %s; hold, delete all and after %g\n",
		strings.Join(flood, ", "), rep.HoldScale)
	fmt.Fprintf(w, "times are simulated, each at its phase's scale; boot delay %v; hold %.0f min; the controller restarts between flood and hold\n",
		BootDelay, rep.HoldSeconds/60)
	if rep.CreatesInFlight > 0 {
		fmt.Fprintf(w, "simulated Gargantua: %d VM creates and %d deletes in flight, client %d QPS\n",
			rep.CreatesInFlight, rep.DeletesInFlight, gargantuaQPS)
	}
	if rep.Machine != "" {
		fmt.Fprintf(w, "machine: %s\n", rep.Machine)
	}
	if len(rep.LoadAverages) > 0 {
		loads := make([]string, len(rep.LoadAverages))
		for i, l := range rep.LoadAverages {
			loads[i] = fmt.Sprintf("%.1f", l)
		}
		fmt.Fprintf(w, "load average (1 min) at start and after each scenario: %s\n", strings.Join(loads, ", "))
	}
	for _, warn := range rep.Warnings {
		fmt.Fprintf(w, "WARNING: %s\n", warn)
	}
	for _, n := range orderedNs(rep.Results) {
		var cols []*Result
		for i := range rep.Results {
			if rep.Results[i].N == n {
				cols = append(cols, &rep.Results[i])
			}
		}
		writeTable(w, n, cols)
	}
	writeReachability(w, rep.Results)
}

func orderedNs(results []Result) []int {
	var ns []int
	for _, r := range results {
		if !slices.Contains(ns, r.N) {
			ns = append(ns, r.N)
		}
	}
	return ns
}

func writeTable(w io.Writer, n int, cols []*Result) {
	ours, base := pick(cols, ModeOurs), pick(cols, ModeBaseline)
	withRatio := ours != nil && base != nil
	endpoints := endpointsOf(cols, func(r *Result) map[string]int { return r.Requests })
	lifecycle := endpointsOf(cols, func(r *Result) map[string]int { return r.LifecycleRequests })
	eventEnd := endpointsOf(cols, func(r *Result) map[string]int { return r.EventEnd.Requests })

	fmt.Fprintf(w, "\nN = %d (rate-limit floor %.2f min; scale: flood %g, hold %g)\n", n, Floor(n).Minutes(), cols[0].FloodScale, cols[0].HoldScale)
	header := []string{""}
	for _, c := range cols {
		header = append(header, c.label())
	}
	if withRatio {
		header = append(header, "ours/baseline")
	}
	lines := [][]string{header}
	for _, r := range tableRows(endpoints, lifecycle, eventEnd) {
		line := []string{r.label}
		for _, c := range cols {
			line = append(line, formatValue(r.format, r.value(c)))
		}
		if withRatio {
			line = append(line, formatRatio(r, ours, base))
		}
		lines = append(lines, line)
	}
	writeAligned(w, lines)
	for _, c := range cols {
		for _, note := range c.Notes {
			fmt.Fprintf(w, "note (%s): %s\n", c.Mode, note)
		}
	}
}

// endpointsOf is every endpoint any column counts in m, sorted.
func endpointsOf(cols []*Result, m func(r *Result) map[string]int) []string {
	var endpoints []string
	for _, c := range cols {
		for e := range m(c) {
			if !slices.Contains(endpoints, e) {
				endpoints = append(endpoints, e)
			}
		}
	}
	slices.Sort(endpoints)
	return endpoints
}

// writeAligned prints the first column left-aligned and the others right-aligned.
func writeAligned(w io.Writer, lines [][]string) {
	widths := make([]int, len(lines[0]))
	for _, line := range lines {
		for i, cell := range line {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	for _, line := range lines {
		var b strings.Builder
		for i, cell := range line {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			if i == 0 {
				b.WriteString(cell + pad)
			} else {
				b.WriteString("  " + pad + cell)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

func pick(cols []*Result, m Mode) *Result {
	for _, c := range cols {
		if c.Mode == m {
			return c
		}
	}
	return nil
}

func formatValue(format string, v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

func formatRatio(r row, ours, base *Result) string {
	if r.noRatio {
		return ""
	}
	o, b := r.value(ours), r.value(base)
	if math.IsNaN(o) || math.IsNaN(b) || b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3g", o/b)
}

// WriteTargets prints one PASS, FAIL or SKIP line per target.
func WriteTargets(w io.Writer, targets []Target) {
	fmt.Fprintln(w, "\ntargets")
	for _, t := range targets {
		fmt.Fprintf(w, "%-4s  %s: %s\n", t.Status, t.Name, t.Detail)
	}
	var missed []string
	for _, t := range targets {
		if t.Status == Fail {
			missed = append(missed, t.Name)
		}
	}
	if len(missed) > 0 {
		fmt.Fprintf(w, "missed %d of %d targets: %s\n", len(missed), len(targets), strings.Join(missed, "; "))
	}
}
