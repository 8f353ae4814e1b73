package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean/fake"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/testenv"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// The warm-pool scenario (issue 18): on-demand sessions at DigitalOcean's
// own pace (scale 1, the 30 s boot delay), one side per pool size on the
// same arrivals, and an overflow side whose arrivals outrun the refills.
// Run by `scripts/bench -scenario warm-pool`; see docs/benchmarks.md.

// WarmPoolConfig is one warm-pool run.
type WarmPoolConfig struct {
	// Sizes are the warm_pool values compared on the steady arrivals; a
	// side without a pool (0) always runs first.
	Sizes []int
	// VMs arrive one every Interval on the steady sides and, on the
	// overflow side (warm_pool Sizes[0]), all within OverflowWindow.
	VMs            int
	Interval       time.Duration
	OverflowWindow time.Duration
	// KeyScope is the Environment's ssh_key_scope.
	KeyScope string
	// Workers is the controller's --workers; 0 keeps its default.
	Workers       int
	ControllerBin string
	Dir           string
	Log           io.Writer
}

// Defaults of the warm-pool scenario, as issue 18 states it.
const (
	DefaultPoolVMs            = 60
	DefaultPoolInterval       = 3 * time.Second
	DefaultPoolOverflowWindow = 10 * time.Second
	DefaultPoolSize           = 5
	// maxPoolTTRP95 is the target with a pool (seconds).
	maxPoolTTRP95 = 2.0
)

// PoolSide is what one side of the warm-pool run measured; times in seconds
// (real and simulated are the same here: scale 1).
type PoolSide struct {
	Name     string `json:"name"`
	WarmPool int    `json:"warm_pool"`
	// Overflow marks the side whose arrivals outrun the refills.
	Overflow bool `json:"overflow,omitempty"`
	VMs      int  `json:"vms"`
	// Window is from the first arrival to the last.
	Window float64 `json:"window"`
	// FillSeconds is from the event's start to the pool's first full
	// ready count (0 without a pool).
	FillSeconds Num `json:"fill_seconds"`
	Running     int `json:"running"`
	// TTR is time-to-running: Gargantua's status write → running with an
	// IP. TTRs are the same per VM, in arrival order (NaN if it never ran).
	TTR  Dist  `json:"ttr"`
	TTRs []Num `json:"ttrs"`
	// Claims counts the VMs whose Droplet took a pool droplet; FirstClaimed
	// how many of the first WarmPool arrivals did.
	Claims       int `json:"claims"`
	FirstClaimed int `json:"first_claimed"`
	// Errors are the VMs that ended in errorduringprovisioning.
	Errors []string `json:"errors,omitempty"`
	// TwoVMDroplets counts droplets carrying the tags of two VMs.
	TwoVMDroplets int `json:"two_vm_droplets"`
	// DropletsAtEnd is what DigitalOcean held once the pool had refilled,
	// against VMs + WantedAtEnd.
	DropletsAtEnd int `json:"droplets_at_end"`
	WantedAtEnd   int `json:"wanted_at_end"`
	// PoolDropletSeconds is the pool droplets' lifetime while unclaimed,
	// from create to claim (the claiming VM's status write) or deletion:
	// what the pool cost on top of the VMs' own droplets.
	PoolDropletSeconds float64 `json:"pool_droplet_seconds"`
	// DrainSeconds is from the event's end to the last unclaimed pool
	// droplet deleted at DigitalOcean.
	DrainSeconds Num            `json:"drain_seconds"`
	Requests     map[string]int `json:"requests"`
	TooMany      int            `json:"too_many"`
	Notes        []string       `json:"notes,omitempty"`
	Aborted      bool           `json:"aborted,omitempty"`
	RealSeconds  float64        `json:"real_seconds"`
}

// PoolCost weighs one pool side's extra droplet time against the waiting
// it saved, VM by VM against the side without a pool.
type PoolCost struct {
	Side             string  `json:"side"`
	PoolDropletHours float64 `json:"pool_droplet_hours"`
	// WaitSavedHours is Σ over VMs (no-pool TTR − pool TTR).
	WaitSavedHours float64 `json:"wait_saved_hours"`
}

// WarmPoolReport is a whole warm-pool run.
type WarmPoolReport struct {
	BootDelay    float64    `json:"boot_delay"`
	KeyScope     string     `json:"key_scope"`
	Machine      string     `json:"machine"`
	LoadAverages []float64  `json:"load_averages"`
	Sides        []PoolSide `json:"sides"`
	Costs        []PoolCost `json:"costs"`
	Targets      []Target   `json:"targets"`
}

// Missed reports whether a target failed.
func (r *WarmPoolReport) Missed() bool {
	return slices.ContainsFunc(r.Targets, func(t Target) bool { return t.Status == Fail })
}

func (c *WarmPoolConfig) validate() error {
	switch {
	case c.VMs < 1:
		return fmt.Errorf("the warm-pool scenario needs at least one VM")
	case c.Interval <= 0 || c.OverflowWindow <= 0:
		return fmt.Errorf("arrival interval and overflow window must be positive")
	case len(c.Sizes) == 0:
		return fmt.Errorf("no warm_pool size given")
	case c.KeyScope != KeyScopeVM && c.KeyScope != KeyScopeEnvironment:
		return fmt.Errorf("key scope %q is not vm or environment", c.KeyScope)
	}
	for _, k := range c.Sizes {
		if k < 1 || k > 100 {
			return fmt.Errorf("warm_pool %d is not within 1–100", k)
		}
	}
	return nil
}

// poolArrivals is one side's plan.
type poolArrivals struct {
	name     string
	warmPool int
	interval time.Duration
	overflow bool
}

// RunWarmPool runs the sides one after the other on one control plane, each
// with its own namespace, fake and controller, and evaluates the targets.
func RunWarmPool(ctx context.Context, cfg WarmPoolConfig) (*WarmPoolReport, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = os.Stderr
	}
	rep := &WarmPoolReport{BootDelay: BootDelay.Seconds(), KeyScope: cfg.KeyScope, Machine: Machine(), LoadAverages: []float64{loadAverage()}}
	kit, err := prepareRun(ctx, cfg.ControllerBin, cfg.Dir, cfg.Log)
	if err != nil {
		return rep, err
	}
	defer func() { _ = kit.env.Stop() }()

	plans := []poolArrivals{{name: "no pool", interval: cfg.Interval}}
	for _, k := range cfg.Sizes {
		plans = append(plans, poolArrivals{name: fmt.Sprintf("warm_pool %d", k), warmPool: k, interval: cfg.Interval})
	}
	plans = append(plans, poolArrivals{name: fmt.Sprintf("overflow, warm_pool %d", cfg.Sizes[0]), warmPool: cfg.Sizes[0],
		interval: cfg.OverflowWindow / time.Duration(max(cfg.VMs-1, 1)), overflow: true})
	for i, p := range plans {
		s := &poolSide{cfg: &cfg, env: kit.env, bin: kit.bin, missing: kit.missing, plan: p, slug: fmt.Sprintf("pool-%d-%d", i, p.warmPool)}
		res, err := s.run(ctx)
		if err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("aborted: %v (logs in %s)", err, s.dir))
			res.Aborted = true
		}
		rep.Sides = append(rep.Sides, res)
		rep.LoadAverages = append(rep.LoadAverages, loadAverage())
		if ctx.Err() != nil {
			break
		}
	}
	rep.Costs = poolCosts(rep.Sides)
	rep.Targets = EvaluateWarmPool(rep.Sides, cfg.Interval)
	return rep, ctx.Err()
}

// poolSide is one side's namespace, fake and controller.
type poolSide struct {
	cfg     *WarmPoolConfig
	env     *testenv.Env
	bin     string
	missing map[string]bool
	plan    poolArrivals
	slug    string

	dir, ns, token string
	do             *fake.Server
	ctrl           *controller
	hf             *gargantuasim.Clients
	pools          provcontrollers.WarmPoolClient
	droplets       provcontrollers.DropletClient
	hfEnv          *hfv1.Environment
	track          *tracker
	lives          *lifeLog
	res            PoolSide
}

func (s *poolSide) logf(format string, args ...any) {
	fmt.Fprintf(s.cfg.Log, "%s [%s] %s\n", time.Now().Format("15:04:05"), s.plan.name, fmt.Sprintf(format, args...))
}

func (s *poolSide) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.res.Notes = append(s.res.Notes, msg)
	s.logf("note: %s", msg)
}

// poolEvent names the side's scheduled event.
const poolEvent = "bench-event"

func (s *poolSide) run(ctx context.Context) (PoolSide, error) {
	began := time.Now()
	s.res = PoolSide{Name: s.plan.name, WarmPool: s.plan.warmPool, Overflow: s.plan.overflow, VMs: s.cfg.VMs, FillSeconds: Num(nan), DrainSeconds: Num(nan)}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer s.tearDown()
	if err := s.setUp(ctx); err != nil {
		return s.res, err
	}
	go s.lives.poll(ctx)

	eventBegan := time.Now()
	if err := s.startEvent(); err != nil {
		return s.res, err
	}
	if s.plan.warmPool > 0 {
		if err := s.waitPoolReady(ctx, 3*time.Minute); err != nil {
			return s.res, fmt.Errorf("pool never filled: %w", err)
		}
		s.res.FillSeconds = Num(time.Since(eventBegan).Seconds())
		s.logf("pool of %d ready after %.1f s", s.plan.warmPool, float64(s.res.FillSeconds))
	}

	vms, err := s.arrive(ctx)
	if err != nil {
		return s.res, err
	}
	bound := BootDelay + time.Duration(len(vms))*s.plan.interval + 3*time.Minute
	if err := s.waitRunning(ctx, vms, bound); err != nil {
		s.note("waiting for all running: %v", err)
	}
	s.measure(vms)
	if s.plan.warmPool > 0 {
		if err := s.waitPoolReady(ctx, 3*time.Minute); err != nil {
			s.note("pool not refilled: %v", err)
		}
	}
	s.countDroplets(vms)

	ended := time.Now()
	if err := s.endEvent(); err != nil {
		s.note("ending the event: %v", err)
	} else if s.plan.warmPool > 0 {
		s.waitDrained(ctx, ended, 2*time.Minute)
	}
	s.res.PoolDropletSeconds = s.lives.poolSeconds(s.claimedAt(vms), time.Now())
	counts := s.do.RequestCounts()
	s.res.Requests, s.res.TooMany = byEndpoint(counts), tooMany(counts)
	if _, err := s.ctrl.scrapeMetrics(ctx, filepath.Join(s.dir, "metrics.txt")); err != nil {
		s.note("scraping metrics: %v", err)
	}
	s.res.RealSeconds = time.Since(began).Seconds()
	return s.res, nil
}

func (s *poolSide) setUp(ctx context.Context) error {
	s.ns = fmt.Sprintf("bench-%s-%s", s.slug, randomHex(3))
	s.token = "dop_v1_bench_" + randomHex(16)
	s.dir = filepath.Join(s.cfg.Dir, s.slug)
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return err
	}
	timing := (&Config{}).fakeTiming(1)
	s.do = fake.New(fake.Options{BootDelay: timing.BootDelay, DeleteLag: timing.DeleteLag, RateLimits: timing.RateLimits, SSH: true})
	if err := s.do.Start(); err != nil {
		return err
	}
	s.do.AddAccount(s.token, fake.AccountOptions{DropletLimit: s.cfg.VMs + 2*s.plan.warmPool + 50})

	kubeCfg := s.env.Config()
	kubeCfg.QPS, kubeCfg.Burst = 2000, 4000
	extra := map[string]string{keyScopeConfigKey: s.cfg.KeyScope}
	if s.plan.warmPool > 0 {
		extra[warmPoolConfigKey] = strconv.Itoa(s.plan.warmPool)
	}
	var err error
	if s.hfEnv, err = gargantuasim.CreateSetup(ctx, kubeCfg, gargantuasim.Setup{
		Namespace: s.ns, Token: s.token, TokenSecret: tokenSecret,
		Template: template, Image: "ubuntu-22-04-x64", Size: "s-1vcpu-1gb", Region: "nyc1", Env: envName, Extra: extra,
	}); err != nil {
		return err
	}
	gargantuaCfg := rest.CopyConfig(kubeCfg)
	gargantuaCfg.QPS, gargantuaCfg.Burst = gargantuaQPS, gargantuaBurst
	if s.hf, err = gargantuasim.NewClients(gargantuaCfg); err != nil {
		return err
	}
	prov, err := provisioning.NewFactoryFromConfig(kubeCfg)
	if err != nil {
		return err
	}
	s.pools, s.droplets = prov.Provisioning().V1alpha1().WarmPool(), prov.Provisioning().V1alpha1().Droplet()
	s.track = newTracker(s.do, s.token)
	if err := s.track.watchVMs(ctx, kubeCfg, s.ns); err != nil {
		return err
	}
	s.lives = newLifeLog(s.do, s.token)

	port, err := testenv.FreePort()
	if err != nil {
		return err
	}
	wc := &Config{Workers: s.cfg.Workers}
	args := wc.controllerArgs(1, ModeOurs, s.ns, s.env.KubeconfigPath, s.do.URL(), port, s.missing)
	if !s.missing["--ssh-port"] {
		args = append(args, fmt.Sprintf("--ssh-port=%d", s.do.SSHPort()))
	}
	s.logf("namespace %s; controller %s", s.ns, strings.Join(slices.DeleteFunc(slices.Clone(args),
		func(a string) bool { return strings.HasPrefix(a, "--kubeconfig=") }), " "))
	s.ctrl, err = startController(ctx, s.bin, args, port, filepath.Join(s.dir, "controller.log"))
	return err
}

// tearDown deletes the VMs, as Gargantua does when the event is over, and
// waits a while for them to go; then it deletes the namespace while the
// controller runs, so it releases its finalizers, and stops it. (Deleting
// the namespace alone deletes the Droplets of running VMs, which the
// controller of 2026-12-04 does not survive: see docs/benchmarks.md.)
func (s *poolSide) tearDown() {
	if s.hf != nil && s.ctrl != nil {
		if list, err := s.hf.VMs.List(s.ns, metav1.ListOptions{}); err == nil {
			for _, vm := range list.Items {
				_ = s.hf.VMs.Delete(s.ns, vm.Name, nil)
			}
		}
		err := s.poll(context.Background(), namespaceTimeout, func() string {
			list, err := s.hf.VMs.List(s.ns, metav1.ListOptions{})
			if err != nil {
				return err.Error()
			}
			if n := len(list.Items); n > 0 {
				return fmt.Sprintf("%d VMs left", n)
			}
			return ""
		})
		if err != nil {
			s.logf("deleting the VMs: %v", err)
		}
	}
	(&scenario{env: s.env, ns: s.ns, ctrl: s.ctrl, do: s.do}).tearDown(true)
}

// startEvent starts the side's ScheduledEvent for the Environment, with
// more seats than the run makes VMs: the seats never cap its pool.
func (s *poolSide) startEvent() error {
	_, err := s.hf.StartEvent(s.ns, poolEvent, map[string]map[string]int{envName: {template: 100000}})
	return err
}

// endEvent ends the event, as Gargantua does at its end time.
func (s *poolSide) endEvent() error {
	_, err := s.hf.EndEvent(s.ns, poolEvent)
	return err
}

// waitPoolReady waits until the pool's status counts its full size ready.
func (s *poolSide) waitPoolReady(ctx context.Context, bound time.Duration) error {
	return s.poll(ctx, bound, func() string {
		list, err := s.pools.List(s.ns, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		if len(list.Items) != 1 {
			return fmt.Sprintf("%d WarmPools", len(list.Items))
		}
		st := list.Items[0].Status
		if st.Ready < s.plan.warmPool {
			return fmt.Sprintf("wanted %d, ready %d, booting %d", st.Wanted, st.Ready, st.Booting)
		}
		return ""
	})
}

// poll calls cond every pollInterval until it returns "", the controller
// exits, ctx ends or bound passes (an error with cond's last word).
func (s *poolSide) poll(ctx context.Context, bound time.Duration, cond func() string) error {
	deadline := time.Now().Add(bound)
	tick := time.NewTicker(10 * pollInterval)
	defer tick.Stop()
	for {
		last := cond()
		if last == "" {
			return nil
		}
		if err := s.ctrl.exited(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w after %v: %s", errGaveUp, bound, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// arrive creates the side's VMs on its schedule, as Gargantua's claim path
// does for on-demand sessions, and starts each one's clock at its status write.
func (s *poolSide) arrive(ctx context.Context) ([]string, error) {
	vms := names("vm", s.cfg.VMs)
	first := time.Now()
	for i, name := range vms {
		if err := sleepUntilCtx(ctx, first.Add(time.Duration(i)*s.plan.interval)); err != nil {
			return vms[:i], err
		}
		s.track.add(name)
		if _, err := s.hf.CreateVM(s.ns, name, s.hfEnv, template, "digitalocean"); err != nil {
			return vms[:i], err
		}
		now := time.Now()
		s.track.set(name, func(v *vmTimes) { v.ready = now })
	}
	s.res.Window = time.Since(first).Seconds()
	s.logf("%d VMs arrived in %.1f s", len(vms), s.res.Window)
	return vms, nil
}

func sleepUntilCtx(ctx context.Context, at time.Time) error {
	d := time.Until(at)
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// waitRunning waits until every VM runs or ended in error.
func (s *poolSide) waitRunning(ctx context.Context, vms []string, bound time.Duration) error {
	return s.poll(ctx, bound, func() string {
		n := s.track.count(vms, isRunning)
		if n == len(vms) {
			return ""
		}
		if errs := s.erroredVMs(vms); len(errs)+n == len(vms) {
			return ""
		}
		return fmt.Sprintf("%d of %d running", n, len(vms))
	})
}

func (s *poolSide) erroredVMs(vms []string) []string {
	list, err := s.hf.VMs.List(s.ns, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var out []string
	for _, vm := range list.Items {
		if slices.Contains(vms, vm.Name) && vm.Status.Status == "errorduringprovisioning" {
			out = append(out, vm.Name)
		}
	}
	return out
}

// measure computes time-to-running and the claims.
func (s *poolSide) measure(vms []string) {
	var secs []float64
	s.res.TTRs = nil
	for _, v := range s.track.snapshot(vms) {
		if v.running.IsZero() {
			s.res.TTRs = append(s.res.TTRs, Num(nan))
			continue
		}
		d := v.running.Sub(v.ready).Seconds()
		secs = append(secs, d)
		s.res.TTRs = append(s.res.TTRs, Num(d))
	}
	s.res.Running, s.res.TTR = len(secs), Summarize(secs)
	s.res.Errors = s.erroredVMs(vms)
	for i, name := range vms {
		d, err := s.droplets.Get(s.ns, name, metav1.GetOptions{})
		if err != nil || d.Spec.ClaimedDropletID == 0 {
			continue
		}
		s.res.Claims++
		if i < s.plan.warmPool {
			s.res.FirstClaimed++
		}
	}
	s.logf("%d of %d running, p95 time-to-running %.2f s, %d claims (%d of the first %d)",
		s.res.Running, len(vms), orNaN(s.res.TTR, s.res.TTR.P95), s.res.Claims, s.res.FirstClaimed, s.plan.warmPool)
}

// countDroplets checks for droplets carrying two VMs' tags and counts
// DigitalOcean's droplets against the VMs plus the pool's wanted size.
func (s *poolSide) countDroplets(vms []string) {
	list, err := s.hf.VMs.List(s.ns, metav1.ListOptions{})
	if err != nil {
		s.note("listing VMs: %v", err)
		return
	}
	ours := map[string]bool{}
	for _, vm := range list.Items {
		ours[digitalocean.VMTag(string(vm.UID))] = true
	}
	live := s.do.Droplets(s.token)
	for _, d := range live {
		n := 0
		for _, t := range d.Tags {
			if ours[t] {
				n++
			}
		}
		if n > 1 {
			s.res.TwoVMDroplets++
		}
	}
	s.res.DropletsAtEnd = len(live)
	if pools, err := s.pools.List(s.ns, metav1.ListOptions{}); err == nil && len(pools.Items) == 1 {
		s.res.WantedAtEnd = pools.Items[0].Status.Wanted
	}
	if s.res.DropletsAtEnd != len(vms)+s.res.WantedAtEnd {
		s.note("DigitalOcean holds %d droplets for %d VMs and a pool of %d", s.res.DropletsAtEnd, len(vms), s.res.WantedAtEnd)
	}
}

// claimedAt maps each claimed droplet's ID to its VM's status write: the
// end of its life as an unclaimed pool droplet.
func (s *poolSide) claimedAt(vms []string) map[int]time.Time {
	out := map[int]time.Time{}
	times := s.track.snapshot(vms)
	for i, name := range vms {
		d, err := s.droplets.Get(s.ns, name, metav1.GetOptions{})
		if err == nil && d.Spec.ClaimedDropletID != 0 && i < len(times) {
			out[d.Spec.ClaimedDropletID] = times[i].ready
		}
	}
	return out
}

// waitDrained waits until no unclaimed pool droplet is left at DigitalOcean.
func (s *poolSide) waitDrained(ctx context.Context, ended time.Time, bound time.Duration) {
	claimed := map[int]bool{}
	list, err := s.droplets.List(s.ns, metav1.ListOptions{})
	if err == nil {
		for _, d := range list.Items {
			if d.Spec.ClaimedDropletID != 0 {
				claimed[d.Spec.ClaimedDropletID] = true
			}
		}
	}
	err = s.poll(ctx, bound, func() string {
		left := 0
		for _, d := range s.do.Droplets(s.token) {
			if isPoolDroplet(d.Name) && !claimed[d.ID] {
				left++
			}
		}
		if left > 0 {
			return fmt.Sprintf("%d pool droplets left", left)
		}
		return ""
	})
	if err != nil {
		s.note("draining the pool: %v", err)
		return
	}
	s.res.DrainSeconds = Num(time.Since(ended).Seconds())
	s.logf("pool drained %.1f s after the event ended", float64(s.res.DrainSeconds))
}

// warmPoolConfigKey is the Environment key of issue 18.
const warmPoolConfigKey = "warm_pool"

// isPoolDroplet tells a pool member's droplet by its name (hfdo-pool-<random>),
// which it keeps when a VM takes it.
func isPoolDroplet(name string) bool { return strings.HasPrefix(name, "hfdo-pool-") }
