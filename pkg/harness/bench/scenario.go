package bench

import (
	"context"
	"fmt"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
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
// Its phases: scenario_setup.go (namespace, fake, controller processes, tear
// down), scenario_flood.go (probes, flood, waiting for all running),
// scenario_hold.go (hold, then the counts), eventend.go (deleting all).
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
	do             *fakedo.Server
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
	// endBegan and ended are when the event end's window opened and
	// closed (see endEvent).
	endBegan, ended time.Time
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
	if err := s.waitKeys(ctx); err != nil {
		return s.res, err
	}
	if err := s.waitTidy(ctx); err != nil {
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
