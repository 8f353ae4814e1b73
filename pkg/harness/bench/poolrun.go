package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// poolRun is one side on one trace: its namespace, token, fake and controller.
type poolRun struct {
	cfg     *WarmPoolConfig
	env     *testenv.Env
	bin     string
	missing map[string]bool
	side    poolSideSpec
	trace   PoolTrace
	slug    string

	dir, ns, token string
	do             *fakedo.Server
	ctrl           *controller
	garg           *gargantuasim.Gargantua
	pools          provcontrollers.WarmPoolClient
	droplets       provcontrollers.DropletClient
	hfEnv          *hfv1.Environment
	track          *tracker
	lives          *lifeLog
	// arrived counts the sessions started so far: the seats they took.
	arrived atomic.Int64
	samples *sampler

	mu  sync.Mutex // guards res.Notes and res.Before.ControllerSaid, written by the sampler too
	res PoolRun
}

func (r *poolRun) logf(format string, args ...any) {
	fmt.Fprintf(r.cfg.Log, "%s [%s] %s\n", time.Now().Format("15:04:05"), r.slug, fmt.Sprintf(format, args...))
}

func (r *poolRun) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.mu.Lock()
	r.res.Notes = append(r.res.Notes, msg)
	r.mu.Unlock()
	r.logf("note: %s", msg)
}

// poolEvent names each run's scheduled event.
const poolEvent = "bench-event"

// Bounds of the waits, real time.
const (
	// poolSampleEvery is how often the pool is counted at the fake and in
	// the cluster against the seats left.
	poolSampleEvery = 2 * time.Second
	// runningBound is how long after the last arrival every VM must run.
	runningBound = BootDelay + 3*time.Minute
	// drainBound is how long after the event's end the pool may take to go
	// before the run gives up waiting (the target is tighter).
	drainBound = 3 * time.Minute
	// leakBound is how long after its VMs are deleted DigitalOcean may still
	// hold droplets or VM keys before the run counts them as left behind.
	leakBound = 2 * time.Minute
)

func (r *poolRun) run(ctx context.Context) (PoolRun, error) {
	r.res = PoolRun{Side: r.side.name, Trace: r.trace.Name, WarmPool: r.side.warmPool, Seats: r.trace.Seats, VMs: r.trace.VMs(),
		DrainSeconds: Num(nan), MetricSeconds: Num(nan), Before: BeforeStart{FirstPoolAfterCreation: Num(nan), FirstPoolBeforeStart: Num(nan)}}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer r.tearDown()
	if err := r.setUp(ctx); err != nil {
		return r.result(), err
	}
	go r.lives.poll(ctx)
	// Gargantua's scheduled-event controller: provisions the event at its
	// start time, finishes it at its end time.
	go func() {
		if err := r.garg.RunEvents(ctx); err != nil {
			r.note("Gargantua's scheduled-event controller: %v", err)
		}
	}()

	if err := r.createEvent(); err != nil {
		return r.result(), fmt.Errorf("creating the event: %w", err)
	}
	r.samples = newSampler(r)
	go r.samples.run(ctx)
	if err := sleepUntilCtx(ctx, r.res.Start); err != nil {
		return r.result(), err
	}
	r.atStart()

	vms, err := r.arrive(ctx)
	if err != nil {
		return r.result(), err
	}
	if err := r.waitRunning(ctx, vms, runningBound); err != nil {
		r.note("waiting for all running: %v", err)
	}
	r.measure(vms)
	if err := sleepUntilCtx(ctx, r.res.End); err != nil {
		return r.result(), err
	}
	if r.side.size > 0 {
		r.waitDrained(ctx, vms)
	}
	r.samples.stop()
	r.res.Seat = seatFigures(r.samples.taken(), r.trace.Seats, seatGrace)
	r.res.Before.FirstPoolAfterCreation, r.res.Before.FirstPoolBeforeStart = r.firstPoolDroplet()
	r.res.PoolDropletSeconds = r.lives.poolSeconds(r.claimedAt(vms), time.Now())
	counts := r.do.RequestCounts()
	r.res.Requests, r.res.TooMany = byEndpoint(counts), tooMany(counts)
	r.res.RequestsTotal = sum(r.res.Requests)
	r.scrape(ctx)
	r.res.TwoVMDroplets = r.twoVMDroplets()
	r.deleteVMs(ctx)
	if st, err := readProcStats(r.ctrl.proc.Pid()); err == nil {
		r.res.ControllerCPU, r.res.ControllerRSS = st.CPUSeconds, st.PeakRSSMiB
	}
	return r.result(), nil
}

// result copies what the run measured; the sampler may still be writing.
func (r *poolRun) result() PoolRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.res
}

func (r *poolRun) setUp(ctx context.Context) error {
	r.ns = fmt.Sprintf("bench-pool-%s-%s", r.slug, randomHex(3))
	r.token = "dop_v1_bench_" + randomHex(16)
	r.dir = filepath.Join(r.cfg.Dir, r.slug)
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return err
	}
	timing := (&Config{}).fakeTiming(1)
	r.do = fakedo.New(fakedo.Options{BootDelay: timing.BootDelay, DeleteLag: timing.DeleteLag, RateLimits: timing.RateLimits, SSH: true})
	if err := r.do.Start(); err != nil {
		return err
	}
	r.do.AddAccount(r.token, fakedo.AccountOptions{DropletLimit: r.trace.VMs() + 2*r.side.size + 50})

	kubeCfg := r.env.Config()
	kubeCfg.QPS, kubeCfg.Burst = 50, 100
	extra := map[string]string{keyScopeConfigKey: r.cfg.KeyScope, warmPoolConfigKey: r.side.warmPool}
	var err error
	if r.hfEnv, err = gargantuasim.CreateSetup(ctx, kubeCfg, gargantuasim.Setup{
		Namespace: r.ns, Token: r.token, TokenSecret: tokenSecret,
		Template: template, Image: "ubuntu-22-04-x64", Size: "s-1vcpu-1gb", Region: "nyc1", Env: envName, Extra: extra,
	}); err != nil {
		return err
	}
	gargantuaCfg := rest.CopyConfig(kubeCfg)
	gargantuaCfg.QPS, gargantuaCfg.Burst = gargantuaQPS, gargantuaBurst
	if r.garg, err = gargantuasim.New(gargantuaCfg, r.ns, gargantuasim.V3_0); err != nil {
		return err
	}
	r.garg.SessionEvent = poolEvent
	prov, err := provisioning.NewFactoryFromConfig(kubeCfg)
	if err != nil {
		return err
	}
	r.pools, r.droplets = prov.Provisioning().V1alpha1().WarmPool(), prov.Provisioning().V1alpha1().Droplet()
	r.track = newTracker(r.do, r.token)
	r.track.addUnknown = true
	if err := r.track.watchVMs(ctx, kubeCfg, r.ns); err != nil {
		return err
	}
	r.lives = newLifeLog(r.do, r.token)

	port, err := testenv.FreePort()
	if err != nil {
		return err
	}
	args := r.controllerArgs(port)
	r.logf("namespace %s; controller %s", r.ns, strings.Join(slices.DeleteFunc(slices.Clone(args),
		func(a string) bool { return strings.HasPrefix(a, "--kubeconfig=") }), " "))
	r.ctrl, err = startController(ctx, r.bin, args, port, filepath.Join(r.dir, "controller.log"))
	return err
}

// controllerArgs are the fleet benchmark's flags for ours at scale 1, with
// few workers and a modest Kubernetes rate: eleven controllers share two
// cores and one apiserver, and each serves at most 60 VMs and its pool.
func (r *poolRun) controllerArgs(port int) []string {
	wc := &Config{Workers: r.cfg.Workers}
	args := wc.controllerArgs(1, ModeOurs, r.ns, r.env.KubeconfigPath, r.do.URL(), port, r.missing)
	for _, a := range []string{fmt.Sprintf("--ssh-port=%d", r.do.SSHPort()), "--kube-qps=20", "--kube-burst=40"} {
		if !r.missing[flagName(a)] {
			args = append(args, a)
		}
	}
	return args
}

// createEvent makes the run's on-demand event PreStart before its start,
// asking for the trace's seats of the template.
func (r *poolRun) createEvent() error {
	now := time.Now()
	// The admin API keeps whole seconds (time.UnixDate): round up so the
	// event is never made less than PreStart before its start.
	start := now.Add(fromSeconds(r.trace.PreStart)).Truncate(time.Second).Add(time.Second)
	end := start.Add(fromSeconds(r.trace.End))
	r.res.EventCreated, r.res.Start, r.res.End = now, start, end
	_, err := r.garg.Clients.CreateEvent(r.ns, poolEvent, start, end, true, map[string]map[string]int{envName: {template: r.trace.Seats}})
	if err == nil {
		r.logf("event made; starts %s, ends %s, %d seats", start.Format("15:04:05"), end.Format("15:04:05"), r.trace.Seats)
	}
	return err
}

// atStart reads the pool's status at the start time: it should be ready.
func (r *poolRun) atStart() {
	if r.side.size == 0 {
		return
	}
	list, err := r.pools.List(r.ns, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		r.note("no single WarmPool at the start (%v)", err)
		return
	}
	st := list.Items[0].Status
	r.res.Before.ReadyAtStart, r.res.Before.WantedAtStart = st.Ready, st.Wanted
	r.logf("at the start: pool wanted %d, ready %d, booting %d", st.Wanted, st.Ready, st.Booting)
}

// arrive starts the trace's sessions at their times after the start, as
// Gargantua's session server and claim controller do for on-demand
// sessions. A VM's clock starts before the session starts: Gargantua's
// calls are part of what the user waits for.
func (r *poolRun) arrive(ctx context.Context) ([]string, error) {
	var vms []string
	for i, at := range r.trace.Arrivals {
		if err := sleepUntilCtx(ctx, r.res.Start.Add(fromSeconds(at))); err != nil {
			return vms, err
		}
		began := time.Now()
		r.arrived.Add(1)
		sess, err := r.garg.StartSession(fmt.Sprintf("user-%03d", i), r.hfEnv, template)
		if sess == nil || len(sess.VMs) == 0 {
			return vms, fmt.Errorf("starting session %d: %w", i, err)
		}
		name := sess.VMs[0]
		r.track.set(name, func(v *vmTimes) { v.ready = began })
		vms = append(vms, name)
		if err != nil {
			r.note("session of %s: %v", name, err)
		}
	}
	r.logf("%d sessions started", len(vms))
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
