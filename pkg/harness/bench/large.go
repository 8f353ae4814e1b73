package bench

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
)

// LargeConfig is a large installation: VMs across Envs
// Environments, each with its own token, built up in waves of Event VMs per
// Environment, held, then one more event of NewEvent VMs while another
// Environment's VMs are all deleted (see docs/benchmarks.md).
type LargeConfig struct {
	VMs      int `json:"vms"`
	Envs     int `json:"envs"`
	Event    int `json:"event"`
	NewEvent int `json:"new_event"`
	// Hold is the simulated steady state between the build-up and the new event.
	Hold time.Duration `json:"hold_ns"`
	// Simulated seconds per real second of the build-up, the hold and the
	// new event; the controller is restarted with each phase's flags.
	BuildScale float64 `json:"build_scale"`
	HoldScale  float64 `json:"hold_scale"`
	EventScale float64 `json:"event_scale"`
	// KeyScope is the Environments' ssh_key_scope.
	KeyScope string `json:"key_scope"`
	Workers  int    `json:"workers,omitempty"`
	// ControllerBin is a prebuilt controller; empty builds it into Dir.
	ControllerBin string    `json:"controller_bin,omitempty"`
	Dir           string    `json:"dir"`
	Log           io.Writer `json:"-"`
}

// DefaultLarge is the large scenario as pkg/harness/bench/cmd runs it
// unless told otherwise: 10,000 VMs over 10 Environments in rounds of 100
// per Environment, an hour's hold, a new event of 100; the build-up at
// scale 3 (the fleet's N = 1,000 flood), the new event at 1 (real time).
func DefaultLarge() LargeConfig {
	return LargeConfig{VMs: 10000, Envs: 10, Event: 100, NewEvent: 100, Hold: time.Hour,
		BuildScale: 3, HoldScale: DefaultScale, EventScale: 1, KeyScope: KeyScopeEnvironment}
}

// largeRequestRecords keeps every request of a 10,000-VM run in the fake's
// log, which the per-token figures are counted from.
const largeRequestRecords = 5_000_000

func (c *LargeConfig) validate() error {
	switch {
	case c.Envs < 2:
		return fmt.Errorf("-large-envs must be at least 2: one takes the new event, another is busy meanwhile")
	case c.VMs < c.Envs || c.VMs%c.Envs != 0:
		return fmt.Errorf("-large-vms (%d) must be a multiple of -large-envs (%d)", c.VMs, c.Envs)
	case c.Event < 1 || c.NewEvent < 1:
		return fmt.Errorf("event sizes must be at least 1")
	case c.Hold < 0:
		return fmt.Errorf("hold must not be negative")
	case !(c.BuildScale > 0 && c.HoldScale > 0 && c.EventScale > 0):
		return fmt.Errorf("scales must be positive")
	case c.KeyScope != KeyScopeVM && c.KeyScope != KeyScopeEnvironment:
		return fmt.Errorf("key scope %q is not vm or environment", c.KeyScope)
	}
	return nil
}

// fleetConfig is the Config the shared scenario code reads: ours, one VM
// create and 20 deletes in flight as in the fleet benchmark.
func (c *LargeConfig) fleetConfig() Config {
	return Config{Ns: []int{c.VMs}, Modes: []Mode{ModeOurs}, Scale: c.HoldScale, FloodScale: map[int]float64{0: c.BuildScale},
		Hold: c.Hold, KeyScope: map[Mode]string{ModeOurs: c.KeyScope}, CreateConcurrency: DefaultCreateConcurrency,
		DeleteConcurrency: DefaultDeleteConcurrency, Probes: 2, Workers: c.Workers, Dir: c.Dir, Log: c.Log}
}

// The large scenario's controller phases (controller-<phase>.log).
const (
	phaseBuild = "build-up"
	phaseEvent = "event"
)

// RunLarge runs the large scenario on its own control plane and evaluates
// its targets.
func RunLarge(ctx context.Context, cfg LargeConfig) (*LargeReport, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = os.Stderr
	}
	rep := &LargeReport{Config: cfg, Machine: Machine(), LoadAverages: []float64{loadAverage()}}
	kit, err := prepareRun(ctx, cfg.ControllerBin, cfg.Dir, cfg.Log)
	if err != nil {
		return rep, err
	}
	defer func() { _ = kit.env.Stop() }()
	fleet := cfg.fleetConfig()
	l := &large{cfg: &cfg, scenario: &scenario{cfg: &fleet, env: kit.env, bin: kit.bin, missing: kit.missing, mode: ModeOurs, n: cfg.VMs}}
	res, err := l.run(ctx)
	if err != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("aborted: %v (logs in %s)", err, l.dir))
		res.Aborted = true
	}
	rep.Result = res
	rep.LoadAverages = append(rep.LoadAverages, loadAverage())
	rep.Targets = EvaluateLarge(&rep.Result)
	return rep, err
}

// large is the large scenario: a fleet scenario's namespace, fake, tracker
// and controller, with one Environment and token per envs entry.
type large struct {
	*scenario
	cfg    *LargeConfig
	envs   []*hfv1.Environment
	tokens []string
	vms    [][]string // by Environment, as built up
	phase  phaseMark  // the running phase's start
	out    LargeResult
}

// phaseMark is what a phase's figures are counted from.
type phaseMark struct {
	began    time.Time
	cpu      map[string]float64 // control plane
	benchCPU float64
}

func (l *large) mark() phaseMark {
	self, _ := cpuSeconds(os.Getpid())
	return phaseMark{began: time.Now(), cpu: l.controlPlaneCPU(), benchCPU: self}
}

// endPhase records the phase begun at l.phase, once its controller's
// figures are collected, and starts the next.
func (l *large) endPhase(name string, scale timeScale) {
	now := l.mark()
	p := LargePhase{Name: name, Scale: float64(scale), RealSeconds: now.began.Sub(l.phase.began).Seconds(),
		APIServerCPU: now.cpu["kube-apiserver"] - l.phase.cpu["kube-apiserver"], EtcdCPU: now.cpu["etcd"] - l.phase.cpu["etcd"],
		BenchCPU: now.benchCPU - l.phase.benchCPU}
	if runs := l.res.Controllers; len(runs) > 0 {
		p.ControllerCPU = runs[len(runs)-1].CPUSeconds
	}
	p.Requests = requestsIn(l.do.Requests(), "", l.phase.began, now.began).total()
	l.out.Phases = append(l.out.Phases, p)
	l.phase = now
}

func (l *large) run(ctx context.Context) (res LargeResult, err error) {
	began := time.Now()
	l.tl = timeline{flood: timeScale(l.cfg.BuildScale), hold: timeScale(l.cfg.HoldScale)}
	l.out = LargeResult{VMs: l.cfg.VMs, Envs: l.cfg.Envs, Event: l.cfg.Event, NewEvent: l.cfg.NewEvent, KeyScope: l.cfg.KeyScope,
		PerVMHour: Num(nan)}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer func() {
		res.Notes = l.res.Notes
		// Nothing follows, so nothing waits for the namespace to go.
		l.tearDown(false)
	}()
	if err := l.setUp(ctx); err != nil {
		return l.out, err
	}
	l.pollFor(l.tl.flood)
	go l.track.pollFake(ctx)
	kube0, kubeErr := kubeRequests(ctx, l.env.Config())
	if kubeErr != nil {
		l.note("reading kube-apiserver metrics: %v", kubeErr)
	}
	l.phase = l.mark()
	if err := l.buildUp(ctx); err != nil {
		return l.out, err
	}
	if err := l.restartAs(ctx, phaseHold, l.tl.hold); err != nil {
		return l.out, err
	}
	l.endPhase(phaseBuild, l.tl.flood)
	l.track.setPollEvery(holdPoll) // nothing is made or deleted
	if err := l.holdAll(ctx); err != nil {
		return l.out, err
	}
	l.pollFor(timeScale(l.cfg.EventScale))
	if err := l.restartAs(ctx, phaseEvent, timeScale(l.cfg.EventScale)); err != nil {
		return l.out, err
	}
	l.out.SettleSeconds = l.settle(ctx).Seconds()
	l.logf("the event controller finished its start-up work after %.1f s real", l.out.SettleSeconds)
	l.endPhase(phaseHold, l.tl.hold)
	if err := l.newEvent(ctx); err != nil {
		return l.out, err
	}
	l.collectController(ctx)
	l.endPhase(phaseEvent, l.tl.current())
	l.summarize(ctx, kube0)
	l.out.RealSeconds = time.Since(began).Seconds()
	return l.out, nil
}

// Polling 10,000 droplets every 20 ms would take a core of this 2-core
// machine from the control plane; the fake's own timestamps time every
// event, so a poll only has to come before a deleted droplet is purged.
const (
	maxLargePoll = 250 * time.Millisecond
	holdPoll     = time.Second
)

// pollFor sets the tracker's polls to a quarter of the delete lag at scale,
// between pollInterval and maxLargePoll.
func (l *large) pollFor(scale timeScale) {
	l.track.setPollEvery(min(max(scale.toReal(deleteLag)/4, pollInterval), maxLargePoll))
}

// setUp starts the fake with one account per Environment and makes every
// Environment with its own token Secret, in one namespace that one
// controller serves.
func (l *large) setUp(ctx context.Context) error {
	if err := l.startFake(fmt.Sprintf("large-%d", l.cfg.VMs), largeRequestRecords); err != nil {
		return err
	}
	perEnv := l.cfg.VMs / l.cfg.Envs
	for i := range l.cfg.Envs {
		token := "dop_v1_bench_" + randomHex(16)
		l.tokens = append(l.tokens, token)
		limit := perEnv + 50
		if i == 0 {
			limit += l.cfg.NewEvent
		}
		l.do.AddAccount(token, fakedo.AccountOptions{DropletLimit: limit})
		setup := l.envSetup(fmt.Sprintf("%s-%02d", tokenSecret, i), fmt.Sprintf("%s-%02d", envName, i), token)
		var env *hfv1.Environment
		var err error
		if i == 0 {
			env, err = gargantuasim.CreateSetup(ctx, l.kubeCfg, setup) // the namespace and template too
		} else {
			env, err = l.addEnvironment(setup)
		}
		if err != nil {
			return fmt.Errorf("environment %d: %w", i, err)
		}
		l.envs = append(l.envs, env)
		if i == 0 {
			if err := l.gargantuaClients(ctx); err != nil {
				return err
			}
		}
	}
	if err := l.watch(ctx, l.tokens...); err != nil {
		return err
	}
	l.logf("namespace %s: %d Environments, %d VMs each; scales: build-up %g, hold %g, new event %g",
		l.ns, l.cfg.Envs, perEnv, l.cfg.BuildScale, l.cfg.HoldScale, l.cfg.EventScale)
	return l.startController(ctx, phaseBuild, l.tl.flood)
}

// addEnvironment adds an Environment and its token Secret to the namespace
// CreateSetup made.
func (l *large) addEnvironment(s gargantuasim.Setup) (*hfv1.Environment, error) {
	if _, err := l.hf.Secrets.Create(gargantuasim.TokenSecret(s.Namespace, s.TokenSecret, s.Token)); err != nil {
		return nil, err
	}
	specifics := map[string]string{"region": s.Region, "token-secret": s.TokenSecret}
	maps.Copy(specifics, s.Extra)
	return l.hf.Envs.Create(gargantuasim.Environment(s.Namespace, s.Env, specifics,
		map[string]map[string]string{s.Template: {"size": s.Size, "image": s.Image}}))
}

// buildUp makes the fleet in rounds: each Environment in turn gets an
// event's worth of VMs, one at a time as Gargantua makes them, and the next
// round starts once the round's VMs run (or waiting gives up, noted).
func (l *large) buildUp(ctx context.Context) error {
	perEnv := l.cfg.VMs / l.cfg.Envs
	l.vms = make([][]string, l.cfg.Envs)
	var all []string
	for from := 0; from < perEnv; from += l.cfg.Event {
		roundBegan := time.Now()
		var round []string
		for i, env := range l.envs {
			wave := make([]string, 0, l.cfg.Event)
			for k := from; k < min(from+l.cfg.Event, perEnv); k++ {
				wave = append(wave, fmt.Sprintf("e%02d-%05d", i, k+1))
			}
			if err := l.createVMsIn(ctx, env, wave, nil); err != nil {
				return fmt.Errorf("creating round %d's VMs: %w", from/l.cfg.Event+1, err)
			}
			l.vms[i] = append(l.vms[i], wave...)
			round = append(round, wave...)
		}
		all = append(all, round...)
		if err := l.waitFor(ctx, round, isRunning, l.bounds(len(round)), nil); err != nil {
			if ctx.Err() != nil {
				return err
			}
			l.note("build-up round %d: %v", from/l.cfg.Event+1, err)
		}
		st := l.startStats(round)
		l.logf("build-up: %d of %d VMs running; round of %d in %.1f s real, p95 overhead %.2f s",
			l.track.count(all, isRunning), len(all), len(round), time.Since(roundBegan).Seconds(), st.overhead.P95)
	}
	st := l.startStats(all)
	l.out.BuildUpRunning, l.out.BuildUpOverhead = st.running, st.overhead
	return nil
}

// holdAll lets the whole fleet sit for the simulated hold and counts every
// token's requests in it.
func (l *large) holdAll(ctx context.Context) error {
	if l.cfg.Hold == 0 {
		return nil
	}
	running := l.track.count(l.built(), isRunning)
	began := time.Now()
	l.logf("holding %d VMs for %v simulated (%v real)", running, l.cfg.Hold, l.tl.hold.toReal(l.cfg.Hold).Round(time.Second))
	if err := l.sleep(ctx, l.tl.hold.toReal(l.cfg.Hold)); err != nil {
		return err
	}
	end := time.Now()
	l.out.HoldSeconds = l.tl.sim(began, end)
	l.out.HoldWindow = [2]time.Time{began, end}
	l.out.HoldVMs = running
	total := requestsIn(l.do.Requests(), "", began, end).total()
	l.out.PerVMHour = Num(float64(total) / float64(running) / (l.out.HoldSeconds / 3600))
	l.logf("hold: %d requests, %.3f per VM-hour", total, l.out.PerVMHour)
	return nil
}

// built is every VM of the build-up.
func (l *large) built() []string {
	var out []string
	for _, vms := range l.vms {
		out = append(out, vms...)
	}
	return out
}

// Which Environments the new event's phase uses.
const (
	eventEnv = 0 // takes the new event
	busyEnv  = 1 // its event ends meanwhile: all its VMs are deleted
)

// newEvent starts one more event on the first Environment while the
// second's event ends: its VMs deleted at the garbage collector's pace, on
// another token at the same time.
func (l *large) newEvent(ctx context.Context) error {
	newVMs := names("new", l.cfg.NewEvent)
	busy := l.vms[busyEnv]
	l.out.BusyVMs = len(busy)
	var busyDelete Dist
	var busyMissing int
	deleted := make(chan struct{})
	busyBegan := time.Now()
	var busyEnded time.Time
	go func() {
		defer close(deleted)
		busyDelete, busyMissing = l.deleteAndWait(ctx, busy)
		busyEnded = time.Now()
	}()
	eventBegan := time.Now()
	err := l.createVMsIn(ctx, l.envs[eventEnv], newVMs, nil)
	var waitErr error
	if err == nil {
		waitErr = l.waitFor(ctx, newVMs, isRunning, l.bounds(len(newVMs)), nil)
	}
	<-deleted // before any note: the deletes note from their goroutine
	if err != nil {
		return fmt.Errorf("the new event: %w", err)
	}
	if waitErr != nil {
		if ctx.Err() != nil {
			return waitErr
		}
		l.note("the new event: %v", waitErr)
	}
	l.writeTimelines(eventBegan, append(slices.Clone(newVMs), busy...))
	st := l.startStats(newVMs)
	l.out.NewEventRunning, l.out.NewEventOverhead = st.running, st.overhead
	l.out.BusyDelete, l.out.BusyMissing = busyDelete, busyMissing
	eventEnded := st.lastRunning
	if eventEnded.IsZero() {
		eventEnded = time.Now()
	}
	started := l.startedBy(newVMs)
	l.out.Overlap = overlap(eventBegan, started, busyBegan, busyEnded) / started.Sub(eventBegan).Seconds()
	for _, v := range l.track.snapshot(busy) {
		if v.goneFromKubeFirst() {
			l.out.GoneBeforeDelete++
		}
	}
	l.out.EventWindow = [2]time.Time{eventBegan, later(eventEnded, busyEnded)}
	l.logf("new event: %d of %d running, p95 overhead %.2f s; busy token: %d deleted, p95 %.2f s, %d not gone; overlap %.0f%%",
		st.running, len(newVMs), st.overhead.P95, busyDelete.Count, busyDelete.P95, busyMissing, 100*l.out.Overlap)
	return nil
}

// startedBy is when the controller's part of starting vms was done: the
// last of their droplets created at DigitalOcean (then only the boot is
// left), or now if one never was.
func (l *large) startedBy(vms []string) time.Time {
	var last time.Time
	for _, v := range l.track.snapshot(vms) {
		if v.created.IsZero() {
			return time.Now()
		}
		last = later(last, v.created)
	}
	return last
}

// overlap is how long, in real seconds, [a0, a1] and [b0, b1] share.
func overlap(a0, a1, b0, b1 time.Time) float64 {
	from, to := later(a0, b0), a1
	if b1.Before(to) {
		to = b1
	}
	if !to.After(from) {
		return 0
	}
	return to.Sub(from).Seconds()
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
