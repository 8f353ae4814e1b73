package bench

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean/fake"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/testenv"
	"github.com/rancher/wrangler/v3/pkg/condition"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// What the simulated operator sets up in every scenario's namespace.
const (
	tokenSecret = "do-token"
	template    = "ubuntu"
	envName     = "bench"
)

// Bounds on waiting for the controller; a scenario that hits one carries on
// and says so in its notes.
const (
	// runSlack is simulated time on top of the floor, and how long no VM may
	// progress (but at least stallSlack).
	runSlack = 10 * time.Minute
	// realSlack and perVMRealSlack are added in real time, for Kubernetes
	// work, which the scale does not shorten.
	realSlack      = time.Minute
	perVMRealSlack = 200 * time.Millisecond
	// floodFloors is how many rate-limit floors (simulated) the flood gets,
	// from its first create, before waiting for all running gives up; then
	// realSlack on top.
	floodFloors = 3
	// stallSlack is at least as long as the pauses seen in a fleet that did
	// get there (a minute without progress, then hundreds of VMs at once).
	stallSlack = 2 * time.Minute
	// stopKilled is testenv's grace between SIGTERM and SIGKILL.
	stopKilled = 5 * time.Second
	// namespaceTimeout bounds waiting for a scenario's namespace to go.
	namespaceTimeout = 2 * time.Minute
)

// scenario is one mode at one N, with its own namespace, fake and controller.
type scenario struct {
	cfg     *Config
	env     *testenv.Env
	bin     string
	missing map[string]bool
	mode    Mode
	n       int
	variant variant

	dir, ns, token string
	began          time.Time // when run started: the timelines' zero
	ctrlPhase      string    // the running controller's phase
	ctrlBegan      time.Time // when it was ready
	kubeCfg        *rest.Config
	do             *fake.Server
	hf             *gargantuasim.Clients
	// garg makes the flood on the vmset path, through vmHooks.
	garg     *gargantuasim.Gargantua
	vmHooks  *hookedVMs
	flood    []string // the flood's VMs, once made
	hfEnv    *hfv1.Environment
	droplets provcontrollers.DropletClient
	ctrl     *controller
	track    *tracker
	// tl converts real to simulated time: the flood's scale until the
	// restart between the flood and the hold, the hold's from then on.
	tl         timeline
	floodBegan time.Time // the flood's first create
	res        Result
}

func (s *scenario) logf(format string, args ...any) {
	tag := fmt.Sprintf("%s N=%d", s.mode, s.n)
	if suf := s.variant.suffix(); suf != "" {
		tag += " " + suf
	}
	fmt.Fprintf(s.cfg.Log, "%s [%s] %s\n", time.Now().Format("15:04:05"), tag, fmt.Sprintf(format, args...))
}

func (s *scenario) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.res.Notes = append(s.res.Notes, msg)
	s.logf("note: %s", msg)
}

// run measures the scenario. An error means it could not be set up or was
// interrupted; what the controller fails to do within the bounds is a note.
func (s *scenario) run(ctx context.Context) (Result, error) {
	began := time.Now()
	s.began = began
	s.tl = timeline{flood: timeScale(s.cfg.FloodScaleOf(s.mode, s.n)), hold: timeScale(s.cfg.Scale)}
	s.res = Result{Mode: s.mode, N: s.n, FloodScale: float64(s.tl.flood), HoldScale: float64(s.tl.hold),
		Floor: Floor(s.n).Seconds(), Wall: Num(nan), HeldBack: Num(nan), PerVMHour: Num(nan),
		Path: s.variant.path, ReadyCheck: s.variant.readyCheck, SSHDelay: s.cfg.SSHDelay.Seconds()}
	interrupted := ctx.Err
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer func() { s.tearDown(interrupted() == nil) }()
	if err := s.setUp(ctx); err != nil {
		return s.res, err
	}
	go s.track.pollFake(ctx)
	cpu0 := s.controlPlaneCPU()
	kube0, err := kubeRequests(ctx, s.env.Config())
	if err != nil {
		s.note("reading kube-apiserver metrics: %v", err)
	}

	probes := names("probe", s.cfg.Probes)
	if err := s.runProbes(ctx, probes); err != nil {
		return s.res, err
	}
	half := len(probes) / 2
	s.res.DeleteIdle, s.res.DeleteIdleMissing = s.deleteAndWait(ctx, probes[:half])
	if err := ctx.Err(); err != nil {
		return s.res, err
	}
	s.logf("idle deletes: p95 %.2f s", s.res.DeleteIdle.P95)

	if err := s.runFlood(ctx, probes[half:]); err != nil {
		return s.res, err
	}
	flood := s.flood
	s.res.FloodRealSeconds = time.Since(began).Seconds()
	if err := s.restart(ctx); err != nil {
		return s.res, err
	}
	if err := s.hold(ctx); err != nil {
		return s.res, err
	}
	if s.res.Running < s.n {
		s.floodStats(flood)
		s.logf("after the hold: %d of %d running", s.res.Running, s.n)
	}
	if err := s.endEvent(ctx, flood); err != nil {
		return s.res, err
	}

	s.finish(ctx, cpu0, kube0)
	s.res.RealSeconds = time.Since(began).Seconds()
	return s.res, nil
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%05d", prefix, i+1)
	}
	return out
}

func (s *scenario) setUp(ctx context.Context) error {
	name := fmt.Sprintf("%s-%d", s.mode, s.n)
	if suf := s.variant.suffix(); suf != "" {
		name += "-" + suf
	}
	s.token = "dop_v1_bench_" + randomHex(16)
	if err := s.startFake(name, 0); err != nil {
		return err
	}
	s.do.AddAccount(s.token, fake.AccountOptions{DropletLimit: s.n + s.cfg.Probes + 50})

	var err error
	s.hfEnv, err = gargantuasim.CreateSetup(ctx, s.kubeCfg, s.envSetup(tokenSecret, envName, s.token))
	if err != nil {
		return err
	}
	if err := s.gargantuaClients(ctx); err != nil {
		return err
	}
	if err := s.watch(ctx, s.token); err != nil {
		return err
	}
	s.logf("namespace %s; flood scale %g, hold scale %g", s.ns, s.tl.flood, s.tl.hold)
	return s.startController(ctx, phaseFlood, s.tl.flood)
}

// startFake names the scenario's namespace and log directory after name and
// starts its fake at the flood's scale; maxRecords bounds its request log
// (0: the fake's default). The benchmark's own kube clients must not be
// what limits the flood.
func (s *scenario) startFake(name string, maxRecords int) error {
	s.ns = fmt.Sprintf("bench-%s-%s", name, randomHex(3))
	s.dir = filepath.Join(s.cfg.Dir, name)
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return err
	}
	timing := s.cfg.fakeTiming(s.tl.flood)
	s.do = fake.New(fake.Options{BootDelay: timing.BootDelay, DeleteLag: timing.DeleteLag, RateLimits: timing.RateLimits, SSH: true,
		SSHPublicOnly: true, Guest: s.cfg.fakeGuest(s.tl.flood), MaxRequestRecords: maxRecords})
	s.kubeCfg = s.env.Config()
	s.kubeCfg.QPS, s.kubeCfg.Burst = 2000, 4000
	return s.do.Start()
}

// envSetup is what the simulated operator sets up for one Environment: its
// token Secret, the template, and the mode's ssh_key_scope and the
// variant's ready_check in its specifics.
func (s *scenario) envSetup(secret, env, token string) gargantuasim.Setup {
	s.res.KeyScope = KeyScopeVM
	extra := map[string]string{}
	if s.cfg.KeyScope[s.mode] == KeyScopeEnvironment {
		s.res.KeyScope = KeyScopeEnvironment
		extra[keyScopeConfigKey] = KeyScopeEnvironment
	}
	if s.variant.readyCheck != ReadyCheckDefault {
		extra[readyCheckConfigKey] = s.variant.readyCheck
	}
	return gargantuasim.Setup{
		Namespace: s.ns, Token: token, TokenSecret: secret,
		Template: template, Image: "ubuntu-22-04-x64", Size: "s-1vcpu-1gb", Region: "nyc1", Env: env,
		Extra: extra,
	}
}

// gargantuaClients are the simulated Gargantua's, limited as Gargantua's
// own (main.go), and on the vmset path its VM set controller.
func (s *scenario) gargantuaClients(ctx context.Context) error {
	gargantuaCfg := rest.CopyConfig(s.kubeCfg)
	gargantuaCfg.QPS, gargantuaCfg.Burst = gargantuaQPS, gargantuaBurst
	var err error
	if s.hf, err = gargantuasim.NewClients(gargantuaCfg); err != nil {
		return err
	}
	if s.variant.path == PathVMSet {
		if s.garg, err = gargantuasim.New(gargantuaCfg, s.ns, s.cfg.GargantuaVersion); err != nil {
			return err
		}
		s.vmHooks = &hookedVMs{VirtualMachineClient: s.garg.Clients.VMs}
		s.garg.Clients.VMs = s.vmHooks
		// Its VM set controller: releases its finalizer from deleted VMs.
		go func() {
			if err := s.garg.Run(ctx); err != nil {
				s.logf("the simulated Gargantua's VM set controller: %v", err)
			}
		}()
	}
	return nil
}

// watch starts the Droplet client and the tracker of the tokens' droplets
// and the namespace's VMs.
func (s *scenario) watch(ctx context.Context, tokens ...string) error {
	prov, err := provisioning.NewFactoryFromConfig(s.kubeCfg)
	if err != nil {
		return err
	}
	s.droplets = prov.Provisioning().V1alpha1().Droplet()
	s.track = newTracker(s.do, tokens...)
	return s.track.watchVMs(ctx, s.kubeCfg, s.ns)
}

// The two controller processes of a scenario, by the phases they serve.
const (
	phaseFlood = "flood" // set up, probes, flood, waiting for all running
	phaseHold  = "hold"  // hold, delete all, tear down
)

// fakeTiming is DigitalOcean's timing at a scale, for the fake.
func (c *Config) fakeTiming(scale timeScale) fake.Timing {
	return fake.Timing{
		BootDelay: positiveOr(scale.toReal(BootDelay), fake.NoDelay),
		DeleteLag: scale.toReal(deleteLag),
		RateLimits: fake.RateLimits{
			Disabled:  c.Unlimited,
			PerMinute: PerMinute, PerHour: PerHour,
			Minute: scale.toReal(time.Minute), Hour: scale.toReal(time.Hour),
			KeyListWindow: scale.toReal(time.Minute),
		},
	}
}

// fakeGuest is the droplets' operating system at a scale, for the fake: sshd
// up SSHDelay (simulated) after active.
func (c *Config) fakeGuest(scale timeScale) fake.Guest {
	return fake.Guest{SSHDelay: scale.toReal(c.SSHDelay)}
}

// startController starts the controller of a phase with that scale's flags,
// logging to controller-<phase>.log.
func (s *scenario) startController(ctx context.Context, phase string, scale timeScale) error {
	port, err := testenv.FreePort()
	if err != nil {
		return err
	}
	args := s.cfg.controllerArgs(scale, s.mode, s.ns, s.env.KubeconfigPath, s.do.URL(), port, s.missing)
	if !s.missing["--ssh-port"] {
		// The reachability check logs in to the fake's droplets.
		args = append(args, fmt.Sprintf("--ssh-port=%d", s.do.SSHPort()))
	}
	shown := slices.DeleteFunc(slices.Clone(args), func(a string) bool { return strings.HasPrefix(a, "--kubeconfig=") })
	s.logf("%s controller (scale %g): %s", phase, scale, strings.Join(shown, " "))
	ctrl, err := startController(ctx, s.bin, args, port, filepath.Join(s.dir, "controller-"+phase+".log"))
	if err != nil {
		return err
	}
	s.ctrl = ctrl
	s.ctrlPhase, s.ctrlBegan = phase, time.Now()
	return nil
}

// collectController reads the running controller's peak RSS and CPU time
// and saves its /metrics as metrics-<phase>.txt.
func (s *scenario) collectController(ctx context.Context) {
	run := ControllerRun{Phase: s.ctrlPhase, HeldBack: Num(nan), RealSeconds: time.Since(s.ctrlBegan).Seconds()}
	if st, err := readProcStats(s.ctrl.proc.Pid()); err != nil {
		s.note("reading the %s controller's /proc: %v", s.ctrlPhase, err)
	} else {
		run.PeakRSSMiB, run.CPUSeconds = st.PeakRSSMiB, st.CPUSeconds
	}
	heldBack, err := s.ctrl.scrapeMetrics(ctx, filepath.Join(s.dir, "metrics-"+s.ctrlPhase+".txt"))
	if err != nil {
		s.note("scraping the %s controller's metrics: %v", s.ctrlPhase, err)
	}
	run.HeldBack = Num(heldBack)
	s.res.Controllers = append(s.res.Controllers, run)
}

// restart stops the flood's controller and starts the hold's (restartAs).
func (s *scenario) restart(ctx context.Context) error {
	return s.restartAs(ctx, phaseHold, s.tl.hold)
}

// restartAs stops the running controller (SIGTERM, waiting for its exit)
// once its figures are read, retimes the fake to scale and starts the
// controller of phase with that scale's flags; it picks the objects up
// through its informers.
func (s *scenario) restartAs(ctx context.Context, phase string, scale timeScale) error {
	began := time.Now()
	s.collectController(ctx)
	stopBegan := time.Now()
	s.ctrl.proc.Stop()
	stopped := time.Since(stopBegan)
	s.res.Controllers[len(s.res.Controllers)-1].StopSeconds = stopped.Seconds()
	s.ctrl = nil
	if stopped >= stopKilled {
		s.note("the %s controller took %.1f s to stop after SIGTERM (killed after 5 s)", s.ctrlPhase, stopped.Seconds())
	}
	s.do.SetTiming(s.cfg.fakeTiming(scale))
	if err := s.do.SetDefaultGuest(s.cfg.fakeGuest(scale)); err != nil {
		return err
	}
	s.tl.switchTo(time.Now(), scale)
	if err := s.startController(ctx, phase, scale); err != nil {
		return fmt.Errorf("starting the %s controller: %w", phase, err)
	}
	s.res.RestartSeconds = time.Since(began).Seconds()
	s.logf("restart: %s controller stopped in %.1f s, fake retimed to scale %g, %s controller ready after %.1f s real in all",
		s.res.Controllers[len(s.res.Controllers)-1].Phase, stopped.Seconds(), scale, phase, s.res.RestartSeconds)
	return nil
}

func positiveOr(d, otherwise time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return otherwise
}

func randomHex(bytes int) string {
	b := make([]byte, bytes)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// tearDown deletes the namespace while the controller still runs, so it can
// release the finalizers, and unless interrupted waits a while for it to go:
// otherwise the namespace controller's deletions would load the next scenario.
func (s *scenario) tearDown(wait bool) {
	if kube, err := kubernetes.NewForConfig(s.env.Config()); err == nil && s.ns != "" {
		ctx, cancel := context.WithTimeout(context.Background(), namespaceTimeout)
		defer cancel()
		if err := kube.CoreV1().Namespaces().Delete(ctx, s.ns, metav1.DeleteOptions{}); err == nil && wait {
			for ctx.Err() == nil {
				if _, err := kube.CoreV1().Namespaces().Get(ctx, s.ns, metav1.GetOptions{}); apierrors.IsNotFound(err) {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
		}
	}
	if s.ctrl != nil {
		s.ctrl.proc.Stop()
	}
	if s.do != nil {
		s.do.Close()
	}
}

// runProbes creates the probe VMs and waits until they run; an Environment
// whose ssh_key_scope the controller rejects falls back to vm.
func (s *scenario) runProbes(ctx context.Context, probes []string) error {
	began := time.Now()
	if err := s.createVMs(ctx, probes, nil); err != nil {
		return err
	}
	var lastCheck time.Time
	err := s.waitFor(ctx, probes, isRunning, s.bounds(len(probes)), func() error {
		if s.res.KeyScope != KeyScopeEnvironment || time.Since(lastCheck) < time.Second {
			return nil
		}
		lastCheck = time.Now()
		if msg := s.keyScopeRejected(); msg != "" {
			s.note("the controller rejects %s: %s (%q); falling back to vm", keyScopeConfigKey, KeyScopeEnvironment, msg)
			return s.dropKeyScope()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("probe VMs: %w", err)
	}
	s.logf("%d probe VMs running after %.1f s real", len(probes), time.Since(began).Seconds())
	if keys := len(s.do.Keys(s.token)); s.res.KeyScope == KeyScopeEnvironment && keys >= len(probes) {
		s.note("%s: %s is not in effect: %d SSH keys at DO for %d VMs", keyScopeConfigKey, KeyScopeEnvironment, keys, len(probes))
		s.res.KeyScope = KeyScopeVM + " (environment ignored)"
	}
	return nil
}

// keyScopeRejected returns a Droplet's Configured=False message naming
// ssh_key_scope, if there is one.
func (s *scenario) keyScopeRejected() string {
	list, err := s.droplets.List(s.ns, metav1.ListOptions{})
	if err != nil {
		return ""
	}
	for i := range list.Items {
		d := &list.Items[i]
		if condition.Cond(v1alpha1.Configured).IsFalse(d) {
			if msg := condition.Cond(v1alpha1.Configured).GetMessage(d); strings.Contains(msg, keyScopeConfigKey) {
				return msg
			}
		}
	}
	return ""
}

func (s *scenario) dropKeyScope() error {
	env, err := s.hf.Envs.Get(s.ns, envName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	delete(env.Spec.EnvironmentSpecifics, keyScopeConfigKey)
	if s.hfEnv, err = s.hf.Envs.Update(env); err != nil {
		return err
	}
	s.res.KeyScope = KeyScopeVM + " (environment rejected)"
	return nil
}

// createVMs creates VMs as Gargantua does, CreateConcurrency at a time; atHalf is
// called once half of them exist.
func (s *scenario) createVMs(ctx context.Context, vms []string, atHalf func()) error {
	return s.createVMsIn(ctx, s.hfEnv, vms, atHalf)
}

// createVMsIn is createVMs in the Environment env.
func (s *scenario) createVMsIn(ctx context.Context, env *hfv1.Environment, vms []string, atHalf func()) error {
	for _, name := range vms {
		s.track.add(name)
	}
	var made atomic.Int64
	return s.each(ctx, vms, s.cfg.CreateConcurrency, func(name string) error {
		var err error
		for attempt := 0; attempt < 5; attempt++ {
			if _, err = s.hf.CreateVM(s.ns, name, env, template, "digitalocean"); err == nil {
				break
			}
			time.Sleep(200 * time.Millisecond) // an overloaded apiserver; Gargantua would retry too
		}
		if err != nil {
			return err
		}
		now := time.Now()
		s.track.set(name, func(v *vmTimes) { v.ready = now })
		if atHalf != nil && made.Add(1) == int64((len(vms)+1)/2) {
			atHalf()
		}
		return nil
	})
}

// each runs f on every name, inFlight at a time, and returns the first error.
func (s *scenario) each(ctx context.Context, vms []string, inFlight int, f func(name string) error) error {
	work := make(chan string)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range min(inFlight, len(vms)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range work {
				if err := f(name); err != nil {
					mu.Lock()
					first = cmpErr(first, err)
					mu.Unlock()
				}
			}
		}()
	}
	for _, name := range vms {
		select {
		case work <- name:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	return cmpErr(first, ctx.Err())
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func isRunning(v *vmTimes) bool { return !v.running.IsZero() }
func isGone(v *vmTimes) bool    { return !v.gone.IsZero() }

// errGaveUp means the controller did not finish in the bounds.
var errGaveUp = errors.New("gave up")

// waitBounds are when waiting gives up: limit after since, or when no VM
// progressed for stall.
type waitBounds struct {
	since        time.Time
	limit, stall time.Duration
}

// bounds are for n VMs from now, at the current scale: the floor plus
// runSlack (simulated) plus realSlack and perVMRealSlack each; no progress
// for runSlack, at least stallSlack.
func (s *scenario) bounds(n int) waitBounds {
	sc := s.tl.current()
	return waitBounds{since: time.Now(),
		limit: sc.toReal(Floor(n)+runSlack) + realSlack + time.Duration(n)*perVMRealSlack,
		stall: max(stallSlack, sc.toReal(runSlack))}
}

// floodBounds are for the flood's n VMs: floodFloors floors (simulated, at
// the flood scale) plus realSlack from the flood's first create; the stall
// rule as in bounds.
func (s *scenario) floodBounds(n int) waitBounds {
	b := s.bounds(n)
	b.since, b.limit = s.floodBegan, s.tl.flood.toReal(floodFloors*Floor(n))+realSlack
	return b
}

// waitFor polls until done holds for every VM. It fails when the controller
// exits, ctx ends or check fails, and gives up at the bounds.
func (s *scenario) waitFor(ctx context.Context, vms []string, done func(v *vmTimes) bool, b waitBounds, check func() error) error {
	bound, stall := b.limit, b.stall
	began := b.since
	last, lastChange := -1, time.Now()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		n := s.track.count(vms, done)
		if n == len(vms) {
			return nil
		}
		if now := time.Now(); n != last {
			last, lastChange = n, now
		} else if now.Sub(lastChange) > stall {
			return fmt.Errorf("%w: stuck at %d of %d for %v", errGaveUp, n, len(vms), stall.Round(time.Second))
		}
		if time.Since(began) > bound {
			return fmt.Errorf("%w: %d of %d after %v", errGaveUp, n, len(vms), bound.Round(time.Second))
		}
		if err := s.ctrl.exited(); err != nil {
			return err
		}
		if check != nil {
			if err := check(); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// sleep waits d unless the controller exits or ctx ends.
func (s *scenario) sleep(ctx context.Context, d time.Duration) error {
	end := time.NewTimer(d)
	defer end.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if err := s.ctrl.exited(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-end.C:
			return nil
		case <-tick.C:
		}
	}
}

// deleteAndWait deletes the VMs and returns the delete-to-gone times of those
// whose droplets went, and how many did not in the bounds.
func (s *scenario) deleteAndWait(ctx context.Context, vms []string) (Dist, int) {
	err := s.each(ctx, vms, s.cfg.DeleteConcurrency, func(name string) error {
		if err := s.hf.VMs.Delete(s.ns, name, nil); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		// The VM is deleted once the apiserver says so (or its watch does,
		// whichever comes first: vmTimes.deletedAt).
		now := time.Now()
		s.track.set(name, func(v *vmTimes) { v.deleted = now })
		return nil
	})
	if err != nil {
		s.note("deleting VMs: %v", err)
	}
	if err := s.waitFor(ctx, vms, isGone, s.bounds(len(vms)), nil); err != nil {
		s.note("waiting for the droplets of %d deleted VMs to go: %v", len(vms), err)
	}
	var secs []float64
	for _, v := range s.track.snapshot(vms) {
		if !v.gone.IsZero() {
			secs = append(secs, s.tl.sim(v.deletedAt(), v.gone))
		}
	}
	return Summarize(secs), len(vms) - len(secs)
}

// runFlood creates the N VMs on the scenario's path, deletes the other half
// of the probes once half of them exist, and waits until all run.
func (s *scenario) runFlood(ctx context.Context, floodDeletes []string) error {
	began := time.Now()
	s.floodBegan = began
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	half, deleted := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(deleted)
		select {
		case <-half:
		case <-ctx.Done():
			return
		}
		s.res.DeleteFlood, s.res.DeleteFloodMissing = s.deleteAndWait(ctx, floodDeletes)
	}()
	var err error
	if s.garg != nil {
		s.flood, err = s.createVMSet(func() { close(half) })
	} else {
		s.flood = names("vm", s.n)
		err = s.createVMs(ctx, s.flood, func() { close(half) })
	}
	flood := s.flood
	s.logf("flood: %d VMs created (%s path) in %.1f s real", len(flood), s.variant.path, time.Since(began).Seconds())
	if err != nil {
		cancel()
		<-deleted
		return fmt.Errorf("creating VMs: %w", err)
	}

	err = s.waitFor(ctx, flood, isRunning, s.floodBounds(len(flood)), nil)
	if err != nil && !errors.Is(err, errGaveUp) {
		cancel()
		<-deleted
		return err
	}
	<-deleted
	s.logf("flood deletes: p95 %.2f s", s.res.DeleteFlood.P95)
	s.floodStats(flood)
	if s.res.Running < len(flood) {
		s.note("flood: %v; VMs that ran later, during the hold, are counted (the hold is then no steady state)", err)
	}
	s.res.Keys = len(s.do.Keys(s.token))
	s.res.Reachable = s.reachableReasons()
	s.logf("flood: %d of %d running after %.2f sim min (floor %.2f), p95 overhead %.2f s",
		s.res.Running, len(flood), float64(s.res.Wall)/60, s.res.Floor/60, s.res.Overhead.P95)
	return nil
}

// floodStats computes the flood's figures from the VMs that run by now; the
// informer keeps stamping, so calling it again later counts late VMs too.
func (s *scenario) floodStats(flood []string) {
	st := s.startStats(flood)
	s.res.Running = st.running
	s.res.Overhead, s.res.BeforeCreate, s.res.AfterActive = st.overhead, st.beforeCreate, st.afterActive
	s.res.Wall = Num(nan)
	if s.res.Running == len(flood) {
		s.res.Wall = Num(s.tl.sim(s.floodBegan, st.lastRunning))
	}
}

// startStats are how VMs started: how many run, their time-to-running
// overhead and its parts (simulated), and when the last one ran.
type startStats struct {
	running                             int
	overhead, beforeCreate, afterActive Dist
	lastRunning                         time.Time
}

func (s *scenario) startStats(vms []string) startStats {
	var st startStats
	var overhead, before, after []float64
	for _, v := range s.track.snapshot(vms) {
		if v.running.IsZero() {
			continue
		}
		st.running++
		if v.running.After(st.lastRunning) {
			st.lastRunning = v.running
		}
		overhead = append(overhead, s.tl.sim(v.ready, v.running)-BootDelay.Seconds())
		if !v.created.IsZero() {
			before = append(before, s.tl.sim(v.ready, v.created))
			after = append(after, s.tl.sim(v.active, v.running))
		}
	}
	st.overhead, st.beforeCreate, st.afterActive = Summarize(overhead), Summarize(before), Summarize(after)
	return st
}

// hold lets the fleet sit for the simulated hold and counts its requests.
func (s *scenario) hold(ctx context.Context) error {
	if s.cfg.Hold == 0 {
		return nil
	}
	before := byEndpoint(s.do.RequestCounts())
	began := time.Now()
	s.logf("holding for %v simulated (%v real)", s.cfg.Hold, s.tl.hold.toReal(s.cfg.Hold).Round(time.Second))
	if err := s.sleep(ctx, s.tl.hold.toReal(s.cfg.Hold)); err != nil {
		return err
	}
	s.res.HoldSeconds = s.tl.sim(began, time.Now())
	s.res.HoldRequests = byEndpoint(s.do.RequestCounts())
	for e, n := range before {
		s.res.HoldRequests[e] -= n
	}
	s.res.PerVMHour = Num(float64(sum(s.res.HoldRequests)) / float64(s.n) / (s.res.HoldSeconds / 3600))
	s.logf("hold: %d requests, %.3f per VM-hour", sum(s.res.HoldRequests), s.res.PerVMHour)
	return nil
}

// byEndpoint folds the fake's counts by endpoint and status into counts by endpoint.
func byEndpoint(counts map[string]int) map[string]int {
	out := map[string]int{}
	for key, n := range counts {
		out[endpointOf(key)] += n
	}
	return out
}

// endpointOf strips the status from a fake.RequestRecord.CountKey.
func endpointOf(countKey string) string {
	i := strings.LastIndexByte(countKey, ' ')
	if i < 0 {
		return countKey
	}
	return countKey[:i]
}

func tooMany(counts map[string]int) int {
	n := 0
	for key, c := range counts {
		if strings.HasSuffix(key, " 429") {
			n += c
		}
	}
	return n
}

// finish reads what is measured over the whole scenario, while the controller still runs.
func (s *scenario) finish(ctx context.Context, cpu0, kube0 map[string]float64) {
	s.collectController(ctx)
	s.res.PeakRSSMiB, s.res.CPUSeconds, s.res.HeldBack = combineRuns(s.res.Controllers)
	counts := s.do.RequestCounts()
	s.res.Requests, s.res.TooMany = byEndpoint(counts), tooMany(counts)
	cpu1 := s.controlPlaneCPU()
	s.res.APIServerCPU = cpu1["kube-apiserver"] - cpu0["kube-apiserver"]
	s.res.EtcdCPU = cpu1["etcd"] - cpu0["etcd"]
	if kube1, err := kubeRequests(ctx, s.env.Config()); err != nil {
		s.note("reading kube-apiserver metrics: %v", err)
	} else {
		s.recordKubeRequests(diffCounts(kube0, kube1))
	}

	made := append(names("probe", s.cfg.Probes), s.flood...)
	s.writeTimelines(s.began, made)
	s.res.LifecycleRequests, s.res.LifecycleVMs = lifecycleRequests(s.res.Requests, s.res.HoldRequests), len(made)
	s.res.PerVMLifecycle = Num(float64(sum(s.res.LifecycleRequests)) / float64(len(made)))
	ids := map[int]bool{}
	for _, v := range s.track.snapshot(made) {
		for id := range v.dropletIDs {
			ids[id] = true
		}
		if len(v.dropletIDs) > 1 {
			s.res.Duplicates++
		}
		if v.goneFromKubeFirst() {
			s.res.GoneBeforeDelete++
		}
	}
	s.res.Droplets = len(ids)
}

// lifecycleRequests are all requests but the hold's, by endpoint, without
// endpoints left at zero.
func lifecycleRequests(all, hold map[string]int) map[string]int {
	out := map[string]int{}
	for e, n := range all {
		if n -= hold[e]; n > 0 {
			out[e] = n
		}
	}
	return out
}

// recordKubeRequests sums the scenario's kube-apiserver requests and keeps
// them by verb and resource in kube-requests.txt, most first.
func (s *scenario) recordKubeRequests(counts map[string]float64) {
	keys := make([]string, 0, len(counts))
	for k, v := range counts {
		keys = append(keys, k)
		s.res.KubeRequests += v
		if isWrite(k) {
			s.res.KubeWrites += v
		}
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(counts[b], counts[a]) })
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%8.0f  %s\n", counts[k], k)
	}
	if err := os.WriteFile(filepath.Join(s.dir, "kube-requests.txt"), []byte(b.String()), 0o644); err != nil {
		s.note("%v", err)
	}
}

func (s *scenario) controlPlaneCPU() map[string]float64 {
	out := map[string]float64{}
	for name, pid := range s.env.Pids() {
		if cpu, err := cpuSeconds(pid); err == nil {
			out[name] = cpu
		}
	}
	return out
}

// floodSet names the VirtualMachineSet of the vmset path.
const floodSet = "flood"

// createVMSet makes the flood as one VirtualMachineSet of N, as a scheduled
// event does: Gargantua's VM set controller creates its VMs one after the
// other, each with its status write. The hooks register every VM as its
// create returns and start its clock as its status write does; atHalf is
// called once half of them have their status. It returns the VMs made; a VM
// whose status write failed is noted and kept (it will not run).
func (s *scenario) createVMSet(atHalf func()) ([]string, error) {
	var written atomic.Int64
	half := int64((s.n + 1) / 2)
	s.vmHooks.created = func(vm *hfv1.VirtualMachine, _ time.Time) { s.track.add(vm.Name) }
	s.vmHooks.statusWritten = func(vm *hfv1.VirtualMachine, at time.Time) {
		first := false
		s.track.set(vm.Name, func(v *vmTimes) {
			if v.ready.IsZero() {
				v.ready, first = at, true
			}
		})
		if first && written.Add(1) == half {
			atHalf()
		}
	}
	vms, err := s.garg.CreateVMSet(floodSet, envName, template, s.n, "bench")
	out := make([]string, 0, len(vms))
	for _, vm := range vms {
		out = append(out, vm.Name)
	}
	if err != nil && len(vms) > 0 {
		s.note("VM set: %d of %d VMs made: %v", len(vms), s.n, err)
		err = nil
	}
	if err == nil && int64(len(vms)) < half {
		atHalf() // never reached: let the in-flood deletes go
	}
	return out, err
}

// reachableReasons counts the namespace's Droplets by their Reachable
// condition, as status/reason; a Droplet without it counts as "none".
func (s *scenario) reachableReasons() map[string]int {
	list, err := s.droplets.List(s.ns, metav1.ListOptions{})
	if err != nil {
		s.note("listing Droplets: %v", err)
		return nil
	}
	out := map[string]int{}
	for i := range list.Items {
		out[reachableKey(&list.Items[i])]++
	}
	return out
}

func reachableKey(d *v1alpha1.Droplet) string {
	c := condition.Cond(v1alpha1.Reachable)
	if st := c.GetStatus(d); st != "" {
		return st + "/" + c.GetReason(d)
	}
	return "none"
}
