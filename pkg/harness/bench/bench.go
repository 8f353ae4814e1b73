package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/crds"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
)

// Run starts one control plane, runs every N in every mode against it, each
// with its own namespace, fake and two controller processes (flood, hold),
// and evaluates the targets. A scenario that fails is reported with its
// notes and the run goes on; an interrupt ends it with the results so far.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = os.Stderr
	}
	rep := &Report{HoldScale: cfg.Scale, FloodScales: map[int]float64{}, HoldSeconds: cfg.Hold.Seconds(),
		CreatesInFlight: cfg.CreateConcurrency, DeletesInFlight: cfg.DeleteConcurrency,
		Machine: Machine(), LoadAverages: []float64{loadAverage()}}
	for _, n := range cfg.Ns {
		rep.FloodScales[n] = cfg.FloodScaleFor(n)
		if v := cfg.FloodScaleOf(ModeBaseline, n); v != rep.FloodScales[n] && slices.Contains(cfg.Modes, ModeBaseline) {
			if rep.BaselineFloodScales == nil {
				rep.BaselineFloodScales = map[int]float64{}
			}
			rep.BaselineFloodScales[n] = v
		}
	}
	kit, err := prepareRun(ctx, cfg.ControllerBin, cfg.Dir, cfg.Log)
	if err != nil {
		return rep, err
	}
	defer func() { _ = kit.env.Stop() }()
	bin, missing, env := kit.bin, kit.missing, kit.env
	if len(missing) > 0 {
		var flags []string
		for f := range missing {
			flags = append(flags, f)
		}
		slices.Sort(flags)
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the controller rejects %s, left out (a mode that relies on one is not what it claims)",
			strings.Join(flags, ", ")))
	}

	if slices.Contains(cfg.Paths, PathVMSet) {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("vmset path: the flood is one VirtualMachineSet made by Gargantua %s's VM set controller, one VM at a time (-create-concurrency does not apply to it)", cfg.GargantuaVersion))
	}
	if cfg.Unlimited {
		rep.Warnings = append(rep.Warnings, "DigitalOcean rate limits off (-no-rate-limits): this run measures what Kubernetes alone allows, not the targets")
	}

	for _, n := range cfg.Ns {
		for _, mode := range cfg.Modes {
			for _, v := range cfg.variants() {
				s := &scenario{cfg: &cfg, env: env, bin: bin, missing: missing, mode: mode, n: n, variant: v}
				res, err := s.run(ctx)
				if err != nil {
					// Measured so far, but not complete: a target it feeds fails.
					res.Notes = append(res.Notes, fmt.Sprintf("aborted: %v (logs in %s)", err, s.dir))
					res.Aborted = true
				}
				rep.Results = append(rep.Results, res)
				if ctx.Err() != nil {
					rep.Targets = Evaluate(rep.Results)
					return rep, fmt.Errorf("%s at N=%d: %w", mode, n, ctx.Err())
				}
				rep.LoadAverages = append(rep.LoadAverages, loadAverage())
			}
		}
	}
	rep.Targets = Evaluate(rep.Results)
	rep.LoadAverages = append(rep.LoadAverages, loadAverage())
	return rep, nil
}

// runKit is what every run needs: the controller binary, the optional
// flags it rejects, and the control plane (stop it when done).
type runKit struct {
	bin     string
	missing map[string]bool
	env     *testenv.Env
}

// prepareRun makes dir, builds the controller into it unless bin names a
// prebuilt one, probes its flags and starts kube-apiserver and etcd with
// HobbyFarm's CRDs and ours, keeping their logs under dir.
func prepareRun(ctx context.Context, bin, dir string, log io.Writer) (runKit, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return runKit{}, err
	}
	if bin == "" {
		fmt.Fprintf(log, "building the controller into %s\n", dir)
		var err error
		if bin, err = BuildController(ctx, dir); err != nil {
			return runKit{}, err
		}
	}
	missing, err := ProbeFlags(ctx, bin)
	if err != nil {
		return runKit{}, err
	}
	ours, err := crds.Objects()
	if err != nil {
		return runKit{}, err
	}
	began := time.Now()
	env, err := testenv.Start(ctx, testenv.Options{CRDs: append(testenv.HobbyFarmCRDs(), ours...), BaseDir: dir})
	if err != nil {
		return runKit{}, err
	}
	fmt.Fprintf(log, "control plane up in %.1f s (logs in %s)\n", time.Since(began).Seconds(), env.Dir)
	return runKit{bin: bin, missing: missing, env: env}, nil
}

// loadAverage is /proc/loadavg's 1-minute figure: above the CPU count, something
// else competed for the machine.
func loadAverage() float64 {
	var load float64
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		_, _ = fmt.Sscanf(string(data), "%f", &load)
	}
	return load
}

// Machine describes this machine: CPUs, memory and CPU model.
func Machine() string {
	model, mem := "unknown CPU", "unknown memory"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb float64
		if _, err := fmt.Sscanf(string(data), "MemTotal: %f kB", &kb); err == nil {
			mem = fmt.Sprintf("%.1f GiB", kb/(1<<20))
		}
	}
	return fmt.Sprintf("%d CPUs (nproc), %s, %s", runtime.NumCPU(), mem, model)
}
