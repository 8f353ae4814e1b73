package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func (s *scenario) setUp(ctx context.Context) error {
	name := fmt.Sprintf("%s-%d", s.mode, s.n)
	if suf := s.variant.suffix(); suf != "" {
		name += "-" + suf
	}
	s.token = "dop_v1_bench_" + randomHex(16)
	if err := s.startFake(name, 0); err != nil {
		return err
	}
	s.do.AddAccount(s.token, fakedo.AccountOptions{DropletLimit: s.n + s.cfg.Probes + 50})
	if so := s.cfg.SellOut; so != nil {
		s.do.SellOut(so.Region, benchSize, so.After)
		s.res.SellOut = so
	}

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
	s.do = fakedo.New(fakedo.Options{BootDelay: timing.BootDelay, DeleteLag: timing.DeleteLag, RateLimits: timing.RateLimits, SSH: true,
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
		Template: template, Image: benchImage, Size: benchSize, Region: s.cfg.region(), Env: env,
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
func (c *Config) fakeTiming(scale timeScale) fakedo.Timing {
	return fakedo.Timing{
		BootDelay: positiveOr(scale.toReal(BootDelay), fakedo.NoDelay),
		DeleteLag: scale.toReal(deleteLag),
		RateLimits: fakedo.RateLimits{
			Disabled:  c.Unlimited,
			PerMinute: PerMinute, PerHour: PerHour,
			Minute: scale.toReal(time.Minute), Hour: scale.toReal(time.Hour),
			KeyListWindow: scale.toReal(time.Minute),
		},
	}
}

// fakeGuest is the droplets' operating system at a scale, for the fake: sshd
// up SSHDelay (simulated) after active.
func (c *Config) fakeGuest(scale timeScale) fakedo.Guest {
	return fakedo.Guest{SSHDelay: scale.toReal(c.SSHDelay)}
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
