// Command bench runs the controller benchmarks (see docs/benchmarks.md and
// scripts/bench): the fleet benchmark, ours against the baseline, or one
// scenario (-scenario). It exits 1 when a target is missed
// and 2 on bad flags or a run that could not finish.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/bench"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/sirupsen/logrus"
)

func main() {
	os.Exit(run())
}

func run() int {
	ns := flag.String("n", "100,1000", "fleet sizes, comma-separated, run in this order")
	modes := flag.String("modes", "ours,baseline", "modes, comma-separated: ours, baseline")
	scale := flag.Float64("scale", bench.DefaultScale, "simulated seconds per real second of the hold, the delete of all N and after")
	baselineFloodScale := flag.String("baseline-flood-scale", bench.DefaultBaselineFloodScale,
		"the baseline's flood scale by N where it differs from -flood-scale, as 1000=3; empty: as -flood-scale")
	floodScale := flag.String("flood-scale", bench.DefaultFloodScale,
		"simulated seconds per real second of set up, probes, flood and waiting for all running, by N as 100=1,1000=3, or one number for every N; an N not given uses -scale")
	hold := flag.Duration("hold", bench.DefaultHold, "simulated steady state between all running and deleting all; 0 skips it")
	keyScope := flag.String("key-scope", "environment",
		"ssh_key_scope (vm or environment) of ours, or per mode as ours=environment,baseline=vm; baseline defaults to vm")
	createConc := flag.Int("create-concurrency", bench.DefaultCreateConcurrency,
		"VM creates the simulated Gargantua has in flight (its VirtualMachineSet controller makes one at a time)")
	deleteConc := flag.Int("delete-concurrency", bench.DefaultDeleteConcurrency,
		"VM deletes in flight (kube-controller-manager's garbage collector deletes 20 at a time)")
	probes := flag.Int("probes", bench.DefaultProbes, "VMs made before the flood to time deletions (half idle, half in the flood)")
	workers := flag.Int("workers", 0, "the controller's --workers; 0 keeps its default (-scenario warm-pool: 2 unless given, eleven controllers share the machine)")
	unlimited := flag.Bool("no-rate-limits", false, "turn DigitalOcean's rate limits off to measure what Kubernetes alone allows")
	paths := flag.String("path", "claim",
		"how the flood's VMs are made, comma-separated, each run for every N and mode: claim (Gargantua's claim path, one VM at a time) or vmset (one VirtualMachineSet of N, made by Gargantua's VM set controller)")
	readyChecks := flag.String("ready-checks", "",
		"Environment ready_check values, comma-separated, each run for every N, mode and path: ssh, cloud-init, none, or default (unset: ssh); empty is default only")
	sshDelay := flag.Duration("ssh-delay", 0, "simulated time the fake's sshd takes to come up after a droplet turns active")
	gargantuaVersion := flag.String("gargantua-version", "v3.0",
		"the Gargantua the vmset path plays: v3.0 (v3.0.1-rc0) or v3.3 (v3.1.0 to v3.3.x); v1.0, the go.mod version, labels no VM set VM for a provisioner")
	reachability := flag.Bool("reachability", false,
		"compare ready_check none with ssh (the reachability check's cost); unless given, also -n 100 -modes ours -hold 0 -probes 2")
	region := flag.String("region", bench.DefaultRegion, "the Environment's region: one slug, or several in order of preference, e.g. nyc3,sfo3")
	sellOut := flag.String("sell-out", "", "region=droplets: that region runs out of the benchmark's size after that many droplets of it, e.g. nyc3=400 (DigitalOcean's 422 \"Size is not available in this region.\")")
	bin := flag.String("controller-bin", "", "prebuilt controller binary; empty builds it")
	dir := flag.String("dir", "", "where logs and metrics are kept; default a new temp dir")
	jsonOut := flag.String("json", "", "also write the report as JSON to this file")
	scenario := flag.String("scenario", "",
		"warm-pool: no pool, warm_pool 15 and auto on four arrival traces, all at once (see -pool-*); large: a large installation (see -large-*)")
	poolVMs := flag.Int("pool-vms", bench.DefaultPoolVMs, "-scenario warm-pool: users per trace; the targets are defined at 60")
	poolSeed := flag.Uint64("pool-seed", bench.DefaultPoolSeed, "-scenario warm-pool: seed of the traces' arrival times (kept in the JSON)")
	poolScale := flag.Float64("pool-trace-scale", bench.DefaultPoolScale,
		"-scenario warm-pool: multiplies every trace time but the boot (the 10 min before the start, the arrivals, the end); below 1 only to check the harness quickly")
	poolRuns := flag.String("pool-runs", "", "-scenario warm-pool: only these sides or side/trace pairs, comma-separated (e.g. auto,fixed-15/steady); empty runs all")
	large := bench.DefaultLarge()
	flag.IntVar(&large.VMs, "large-vms", large.VMs, "-scenario large: VMs built up, spread evenly over the Environments")
	flag.IntVar(&large.Envs, "large-envs", large.Envs, "-scenario large: Environments, each with its own token")
	flag.IntVar(&large.Event, "large-event", large.Event, "-scenario large: VMs each Environment gets per build-up round (an event's worth)")
	flag.IntVar(&large.NewEvent, "large-new-event", large.NewEvent, "-scenario large: VMs of the event started while all run")
	flag.DurationVar(&large.Hold, "large-hold", large.Hold, "-scenario large: simulated steady state after the build-up; 0 skips it")
	flag.Float64Var(&large.BuildScale, "large-build-scale", large.BuildScale, "-scenario large: simulated seconds per real second of the build-up (-scale is the hold's)")
	flag.Float64Var(&large.EventScale, "large-event-scale", large.EventScale, "-scenario large: simulated seconds per real second of the new event")
	flag.Parse()
	given := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if *reachability {
		defaults := map[string]string{"n": "100", "modes": "ours", "hold": "0", "probes": "2", "ready-checks": "none,ssh"}
		for name, value := range defaults {
			if !given[name] {
				if err := flag.Set(name, value); err != nil {
					return usage("-reachability: %v", err)
				}
			}
		}
	}
	logrus.SetLevel(logrus.WarnLevel) // the VM informer's start and stop lines are noise here
	switch *scenario {
	case "":
	case "warm-pool":
		w := *workers
		if !given["workers"] {
			w = bench.DefaultPoolWorkers
		}
		cfg := bench.WarmPoolConfig{Seed: *poolSeed, VMs: *poolVMs, Scale: *poolScale, Only: v1alpha1.SplitList(*poolRuns), Workers: w,
			ControllerBin: *bin, Dir: *dir, Log: os.Stderr}
		return runWarmPool(cfg, *keyScope, *jsonOut)
	case "large":
		large.HoldScale, large.Workers, large.ControllerBin, large.Dir, large.Log = *scale, *workers, *bin, *dir, os.Stderr
		return runLarge(large, *keyScope, *jsonOut)
	default:
		return usage("-scenario: %q is not warm-pool or large", *scenario)
	}

	cfg := bench.Config{Scale: *scale, Hold: *hold, CreateConcurrency: *createConc, DeleteConcurrency: *deleteConc, Probes: *probes,
		Workers: *workers, Unlimited: *unlimited, ControllerBin: *bin, Dir: *dir, Log: os.Stderr}
	var err error
	if cfg.Ns, err = parseInts(*ns); err != nil {
		return usage("-n: %v", err)
	}
	if cfg.FloodScale, err = bench.ParseFloodScale(*floodScale); err != nil {
		return usage("-flood-scale: %v", err)
	}
	if cfg.BaselineFloodScale, err = bench.ParseFloodScale(*baselineFloodScale); err != nil {
		return usage("-baseline-flood-scale: %v", err)
	}
	for _, m := range v1alpha1.SplitList(*modes) {
		cfg.Modes = append(cfg.Modes, bench.Mode(m))
	}
	if cfg.KeyScope, err = parseKeyScope(*keyScope); err != nil {
		return usage("-key-scope: %v", err)
	}
	for _, p := range v1alpha1.SplitList(*paths) {
		cfg.Paths = append(cfg.Paths, bench.Path(p))
	}
	for _, rc := range v1alpha1.SplitList(*readyChecks) {
		if rc == "default" {
			rc = bench.ReadyCheckDefault
		}
		cfg.ReadyChecks = append(cfg.ReadyChecks, rc)
	}
	cfg.SSHDelay = *sshDelay
	cfg.Region = *region
	if cfg.SellOut, err = bench.ParseSellOut(*sellOut); err != nil {
		return usage("%v", err)
	}
	if cfg.GargantuaVersion, err = gargantuasim.ParseVersion(*gargantuaVersion); err != nil {
		return usage("-gargantua-version: %v", err)
	}
	if cfg.Dir == "" {
		if cfg.Dir, err = os.MkdirTemp("", "hf-bench-"); err != nil {
			return usage("%v", err)
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, runErr := bench.Run(ctx, cfg)
	if rep != nil && len(rep.Results) > 0 {
		bench.WriteTables(os.Stdout, rep)
		bench.WriteTargets(os.Stdout, rep.Targets)
	}
	return finish(*jsonOut, cfg.Dir, rep, rep != nil, runErr)
}

// runWarmPool runs the warm-pool scenario (bench.RunWarmPool).
func runWarmPool(cfg bench.WarmPoolConfig, keyScope, jsonOut string) int {
	var err error
	if cfg.KeyScope, err = oursAndDir(keyScope, &cfg.Dir, "hf-bench-pool-"); err != nil {
		return usage("%v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, runErr := bench.RunWarmPool(ctx, cfg)
	if rep != nil && len(rep.Runs) > 0 {
		bench.WriteWarmPool(os.Stdout, rep)
	}
	return finish(jsonOut, cfg.Dir, rep, rep != nil, runErr)
}

// runLarge runs the large installation (bench.RunLarge).
func runLarge(cfg bench.LargeConfig, keyScope, jsonOut string) int {
	var err error
	if cfg.KeyScope, err = oursAndDir(keyScope, &cfg.Dir, "hf-bench-large-"); err != nil {
		return usage("%v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, runErr := bench.RunLarge(ctx, cfg)
	if rep != nil {
		bench.WriteLarge(os.Stdout, rep)
	}
	return finish(jsonOut, cfg.Dir, rep, rep != nil, runErr)
}

// oursAndDir is -key-scope's value for ours, and makes a temp dir named
// prefix* when *dir is empty: what the one-mode scenarios share.
func oursAndDir(keyScope string, dir *string, prefix string) (string, error) {
	scopes, err := parseKeyScope(keyScope)
	if err != nil {
		return "", fmt.Errorf("-key-scope: %w", err)
	}
	if *dir == "" {
		if *dir, err = os.MkdirTemp("", prefix); err != nil {
			return "", err
		}
	}
	return scopes[bench.ModeOurs], nil
}

// finish writes the JSON record of a run that produced a report, names
// where its logs are kept, and turns its outcome into the exit status:
// 2 when it could not run, 1 when a target was missed.
func finish(jsonOut, dir string, rep interface{ Missed() bool }, reported bool, runErr error) int {
	if jsonOut != "" && reported {
		if err := writeJSON(jsonOut, rep); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 2
		}
	}
	fmt.Fprintf(os.Stderr, "logs and metrics kept in %s\n", dir)
	switch {
	case runErr != nil:
		fmt.Fprintln(os.Stderr, "bench:", runErr)
		return 2
	case rep.Missed():
		return 1
	}
	return 0
}

func usage(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	return 2
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, part := range v1alpha1.SplitList(s) {
		n, err := strconv.Atoi(part)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// parseKeyScope takes "environment" (ours only) or "ours=environment,baseline=vm".
func parseKeyScope(s string) (map[bench.Mode]string, error) {
	out := map[bench.Mode]string{}
	for _, part := range v1alpha1.SplitList(s) {
		mode, scope, ok := strings.Cut(part, "=")
		if !ok {
			mode, scope = string(bench.ModeOurs), part
		}
		if scope != bench.KeyScopeVM && scope != bench.KeyScopeEnvironment {
			return nil, fmt.Errorf("%q is not vm or environment", scope)
		}
		out[bench.Mode(mode)] = scope
	}
	return out, nil
}

func writeJSON(path string, rep any) error {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
