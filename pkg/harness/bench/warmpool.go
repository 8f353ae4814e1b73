package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// The warm-pool scenario: on-demand sessions at DigitalOcean's own pace
// (scale 1, the fake's 30 s boot), every pool side on every arrival trace
// (pooltrace.go) in one invocation. Each side+trace is a run with its own
// namespace, token, fake DigitalOcean and controller process, all on one
// control plane and all at once: the runs spend most of their time waiting
// (10 minutes before each event's start, up to 25 minutes of arrivals), so
// running them side by side fits the whole scenario in about 40 minutes on a
// 2-core machine, where one after the other would take hours.
// Run by `scripts/bench -scenario warm-pool`; see docs/benchmarks.md, "Warm pool".

// Pool sides.
const (
	SideNoPool = "no-pool"
	SideFixed  = "fixed-15"
	SideAuto   = "auto"
	// fixedPoolSize is the fixed side's warm_pool.
	fixedPoolSize = 15
	// autoPoolMax is warm_pool_max's default, which the auto side leaves unset.
	autoPoolMax = 20
)

// poolSideSpec is one side: its name and the Environment's warm_pool.
type poolSideSpec struct {
	name, warmPool string
	// size is the most the pool may hold: warm_pool, or warm_pool_max with auto.
	size int
}

var poolSideSpecs = []poolSideSpec{
	{name: SideNoPool, warmPool: "0"},
	{name: SideFixed, warmPool: fmt.Sprint(fixedPoolSize), size: fixedPoolSize},
	{name: SideAuto, warmPool: "auto", size: autoPoolMax},
}

// WarmPoolConfig is one warm-pool run.
type WarmPoolConfig struct {
	// Seed makes the traces' arrival times; VMs is the users per trace
	// (60 in the scenario's definition); Scale multiplies every time but
	// the boot (1 for the real run, less to check the harness quickly).
	Seed  uint64
	VMs   int
	Scale float64
	// Only, if set, limits the runs to these sides or side/trace pairs
	// (e.g. "auto" or "fixed-15/steady").
	Only []string
	// KeyScope is the Environment's ssh_key_scope.
	KeyScope string
	// Workers is each controller's --workers (small: eleven share the machine).
	Workers       int
	ControllerBin string
	Dir           string
	Log           io.Writer
}

// Defaults of the warm-pool scenario.
const (
	DefaultPoolVMs     = 60
	DefaultPoolWorkers = 2
)

// PoolRun is what one side measured on one trace; times in seconds, real
// time (the fake boots in BootDelay of real time).
type PoolRun struct {
	Side     string `json:"side"`
	Trace    string `json:"trace"`
	WarmPool string `json:"warm_pool"`
	Seats    int    `json:"seats"`
	VMs      int    `json:"vms"`
	// EventCreated, Start and End are the event's moments (RFC 3339).
	EventCreated time.Time `json:"event_created"`
	Start        time.Time `json:"start"`
	End          time.Time `json:"end"`
	Running      int       `json:"running"`
	// TTR is time-to-running: the session's VM created and its status
	// written → running with an IP. TTRs are per VM in arrival order
	// (NaN if it never ran). WaitedBoot counts VMs that waited a boot
	// (TTR above half of it, or never running).
	TTR        Dist  `json:"ttr"`
	TTRs       []Num `json:"ttrs"`
	WaitedBoot int   `json:"waited_boot"`
	// Claims counts VMs whose Droplet took a pool droplet; ClaimTTR is
	// their time-to-running, ClaimTTRs the same per claim.
	Claims        int         `json:"claims"`
	ClaimTTR      Dist        `json:"claim_ttr"`
	ClaimTTRs     []float64   `json:"claim_ttrs"`
	Errors        []string    `json:"errors,omitempty"`
	TwoVMDroplets int         `json:"two_vm_droplets"`
	Before        BeforeStart `json:"before_start"`
	Seat          SeatFigures `json:"seats_held"`
	// PoolDropletSeconds is the pool droplets' lifetime while unclaimed
	// (the fake's records, create to claim or deletion); MetricSeconds is
	// the controller's hf_do_warm_pool_droplet_seconds_total.
	PoolDropletSeconds float64 `json:"pool_droplet_seconds"`
	MetricSeconds      Num     `json:"pool_droplet_seconds_metric"`
	// DrainSeconds is from the event's end to the last unclaimed pool
	// droplet deleted at DigitalOcean.
	DrainSeconds Num `json:"drain_seconds"`
	// Requests are DigitalOcean requests by endpoint up to the drain (the
	// pool's fill and refills included, the final VM deletes not);
	// HeldBack is hf_do_requests_held_back_total by priority.
	Requests      map[string]int     `json:"requests"`
	RequestsTotal int                `json:"requests_total"`
	TooMany       int                `json:"too_many"`
	HeldBack      map[string]float64 `json:"held_back"`
	// DropletsLeft and KeysLeft are what DigitalOcean held once the VMs
	// were deleted: every droplet, every key but the Environment's shared one.
	DropletsLeft int `json:"droplets_left"`
	KeysLeft     int `json:"keys_left"`
	// ControllerCPU and ControllerRSS are the controller process's CPU
	// seconds and peak resident MiB over the run: eleven share the machine.
	ControllerCPU float64  `json:"controller_cpu_seconds"`
	ControllerRSS float64  `json:"controller_peak_rss_mib"`
	Notes         []string `json:"notes,omitempty"`
	Aborted       bool     `json:"aborted,omitempty"`
	RealSeconds   float64  `json:"real_seconds"`
}

// WarmPoolReport is a whole warm-pool run.
type WarmPoolReport struct {
	BootDelay float64 `json:"boot_delay"`
	// ActiveResync is the controllers' --active-resync: the drain's bound
	// is one of it plus 10 s.
	ActiveResync float64     `json:"active_resync"`
	Seed         uint64      `json:"seed"`
	Scale        float64     `json:"scale"`
	KeyScope     string      `json:"key_scope"`
	Machine      string      `json:"machine"`
	LoadAverages []float64   `json:"load_averages"`
	Traces       []PoolTrace `json:"traces"`
	Runs         []PoolRun   `json:"runs"`
	Targets      []Target    `json:"targets"`
	RealSeconds  float64     `json:"real_seconds"`
}

// Missed reports whether a target failed.
func (r *WarmPoolReport) Missed() bool {
	return slices.ContainsFunc(r.Targets, func(t Target) bool { return t.Status == Fail })
}

func (c *WarmPoolConfig) validate() error {
	if c.KeyScope != KeyScopeVM && c.KeyScope != KeyScopeEnvironment {
		return fmt.Errorf("key scope %q is not vm or environment", c.KeyScope)
	}
	if c.Workers < 1 {
		return fmt.Errorf("controller workers must be at least 1")
	}
	_, err := PoolTraces(c.Seed, c.VMs, c.Scale)
	return err
}

// poolPlan is one run to make: a side on a trace.
type poolPlan struct {
	side  poolSideSpec
	trace PoolTrace
}

// poolPlans are every side on every trace, but no-pool on the seats trace
// (without a pool there are no seats to hold it to), kept to only.
func poolPlans(traces []PoolTrace, only []string) []poolPlan {
	var out []poolPlan
	for _, t := range traces {
		for _, s := range poolSideSpecs {
			if s.size == 0 && t.Name == TraceSeats {
				continue
			}
			if len(only) > 0 && !slices.Contains(only, s.name) && !slices.Contains(only, s.name+"/"+t.Name) {
				continue
			}
			out = append(out, poolPlan{side: s, trace: t})
		}
	}
	return out
}

// RunWarmPool starts one control plane, runs every plan at once on it and
// evaluates the targets.
func RunWarmPool(ctx context.Context, cfg WarmPoolConfig) (*WarmPoolReport, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = os.Stderr
	}
	began := time.Now()
	traces, _ := PoolTraces(cfg.Seed, cfg.VMs, cfg.Scale)
	rep := &WarmPoolReport{BootDelay: BootDelay.Seconds(), ActiveResync: ourActiveResync.Seconds(), Seed: cfg.Seed, Scale: cfg.Scale,
		KeyScope: cfg.KeyScope, Machine: Machine(), LoadAverages: []float64{loadAverage()}, Traces: traces}
	plans := poolPlans(traces, cfg.Only)
	if len(plans) == 0 {
		return rep, fmt.Errorf("no side/trace matches %s", strings.Join(cfg.Only, ","))
	}
	kit, err := prepareRun(ctx, cfg.ControllerBin, cfg.Dir, cfg.Log)
	if err != nil {
		return rep, err
	}
	defer func() { _ = kit.env.Stop() }()

	// Sample the load while the runs go: eleven controllers on two cores
	// is what the figures were measured under.
	loadCtx, stopLoad := context.WithCancel(ctx)
	var loadMu sync.Mutex
	go func() {
		tick := time.NewTicker(time.Minute)
		defer tick.Stop()
		for {
			select {
			case <-loadCtx.Done():
				return
			case <-tick.C:
				loadMu.Lock()
				rep.LoadAverages = append(rep.LoadAverages, loadAverage())
				loadMu.Unlock()
			}
		}
	}()

	rep.Runs = make([]PoolRun, len(plans))
	var wg sync.WaitGroup
	for i, p := range plans {
		r := &poolRun{cfg: &cfg, env: kit.env, bin: kit.bin, missing: kit.missing, side: p.side, trace: p.trace,
			slug: fmt.Sprintf("%s-%s", p.side.name, p.trace.Name)}
		wg.Go(func() {
			began := time.Now()
			res, err := r.run(ctx)
			res.RealSeconds = time.Since(began).Seconds()
			if err != nil {
				res.Notes = append(res.Notes, fmt.Sprintf("aborted: %v (logs in %s)", err, r.dir))
				res.Aborted = true
			}
			rep.Runs[i] = res
		})
	}
	wg.Wait()
	stopLoad()
	loadMu.Lock()
	defer loadMu.Unlock()
	rep.LoadAverages = append(rep.LoadAverages, loadAverage())
	rep.Targets = EvaluateWarmPool(rep.Runs, cfg.VMs)
	rep.RealSeconds = time.Since(began).Seconds()
	return rep, ctx.Err()
}
