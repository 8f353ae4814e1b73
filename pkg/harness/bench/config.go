// Package bench runs the controller binary against a real kube-apiserver
// (testenv) and the fake DigitalOcean API with DigitalOcean's limits and the
// controller's periods scaled down in time, creates, holds and deletes N VMs
// the way Gargantua does, and compares the controller's modes (see
// docs/benchmarks.md). It is a program, not a test: pkg/harness/bench/cmd runs it.
package bench

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
)

// Mode is how the controller is run in a scenario.
type Mode string

const (
	// ModeOurs is the controller with its defaults: batched resync, client-side limiter.
	ModeOurs Mode = "ours"
	// ModeBaseline is what the original alpha and other DO controllers do:
	// one GET per droplet every 30 s, no client-side limiter.
	ModeBaseline Mode = "baseline"
)

// Key scopes for the Environment's ssh_key_scope.
const (
	KeyScopeVM          = "vm"
	KeyScopeEnvironment = "environment"
	keyScopeConfigKey   = "ssh_key_scope"
)

// DigitalOcean's figures in simulated time; the fake and the controller get
// them divided by the phase's scale (Config.FloodScaleFor, Config.Scale).
const (
	PerMinute = 250
	PerHour   = 5000
	// BootDelay is how long a droplet takes to turn active.
	BootDelay = 30 * time.Second
	// deleteLag keeps deleted droplets in lists a moment, as DigitalOcean does.
	deleteLag = 2 * time.Second

	bootResync           = time.Second
	ourActiveResync      = time.Minute
	baselineActiveResync = 30 * time.Second
	sweepInterval        = 10 * time.Minute
	// tagTidyDelay is the controller's default --tag-tidy-delay; the
	// baseline's is beyond any run, so it never deletes a tag.
	tagTidyDelay         = time.Minute
	baselineTagTidyDelay = 1000 * time.Hour
	// keyDeleteDelay is the controller's default --key-delete-delay.
	keyDeleteDelay = time.Minute
	// orphanGrace is not scaled: it is a margin against Kubernetes latency,
	// which the scale does not shorten, and scaled it would let the sweep
	// take a slow VM's key or droplet for an orphan.
	orphanGrace = 10 * time.Minute
	// Gargantua's client: ClientGoQPS and ClientGoBurst of its main.go.
	gargantuaQPS   = 100
	gargantuaBurst = 100
)

// Config is one benchmark run.
type Config struct {
	// Ns are the fleet sizes, run in this order.
	Ns []int
	// Modes run for every N, in this order.
	Modes []Mode
	// Scale is simulated seconds per real second of the hold, the delete of
	// all N and what follows.
	Scale float64
	// FloodScale is the scale of setting up, the probes, the flood and
	// waiting for all running, by N; key 0 stands for every N not listed,
	// and an N with neither takes Scale.
	FloodScale map[int]float64
	// BaselineFloodScale overrides FloodScale for the baseline, by N.
	BaselineFloodScale map[int]float64
	// Hold is the simulated steady state between all running and deleting all.
	Hold time.Duration
	// KeyScope is the Environment's ssh_key_scope per mode; vm when unset.
	KeyScope map[Mode]string
	// CreateConcurrency is how many VM creates the simulated Gargantua has in
	// flight, DeleteConcurrency how many deletes.
	CreateConcurrency, DeleteConcurrency int
	// Probes is the number of VMs made before the flood: half are deleted
	// while idle, half during the flood, to time deletions.
	Probes int
	// Workers is the controller's --workers; 0 keeps its default.
	Workers int
	// Unlimited turns DigitalOcean's rate limits off, in the fake and in the
	// controller, to measure what Kubernetes alone allows (the kube floor).
	Unlimited bool
	// Paths are how the flood's VMs are made (claim, vmset), each run for
	// every N and mode; empty is the claim path only. Probes always take
	// the claim path.
	Paths []Path
	// ReadyChecks are Environment ready_check values, each run for every N,
	// mode and path; empty is one run with ready_check unset (ssh).
	ReadyChecks []string
	// SSHDelay (simulated) is how long the fake's sshd takes to come up after
	// a droplet turns active.
	SSHDelay time.Duration
	// Region is the Environment's region setting: one slug, or a list in
	// order of preference; DefaultRegion when empty.
	Region string
	// SellOut, when set, makes one region run out of the benchmark's size
	// partway through (see fakedo.Server.SellOut).
	SellOut *SellOut
	// GargantuaVersion is the Gargantua the vmset path plays.
	GargantuaVersion gargantuasim.Version
	// ControllerBin is a prebuilt controller; empty builds it into Dir.
	ControllerBin string
	// Dir keeps the logs and metrics of every scenario.
	Dir string
	// Log receives progress lines.
	Log io.Writer
}

// SellOut is a region that runs out of the benchmark's size after After
// droplets of it.
type SellOut struct {
	Region string `json:"region"`
	After  int    `json:"after"`
}

// ParseSellOut reads -sell-out: "nyc3=400"; empty is none.
func ParseSellOut(v string) (*SellOut, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	region, after, ok := strings.Cut(v, "=")
	n, err := strconv.Atoi(strings.TrimSpace(after))
	if !ok || err != nil || n < 0 || strings.TrimSpace(region) == "" {
		return nil, fmt.Errorf("-sell-out %q: want region=droplets, e.g. nyc3=400", v)
	}
	return &SellOut{Region: strings.TrimSpace(region), After: n}, nil
}

// The benchmark's droplets: one size and image, in DefaultRegion unless
// Config.Region says otherwise.
const (
	DefaultRegion = "nyc1"
	benchSize     = "s-1vcpu-1gb"
	benchImage    = "ubuntu-22-04-x64"
)

// region is the Environment's region setting.
func (c *Config) region() string {
	if c.Region == "" {
		return DefaultRegion
	}
	return c.Region
}

// Defaults used by pkg/harness/bench/cmd.
const (
	DefaultScale      = 15
	DefaultFloodScale = "100=1,1000=1"
	// DefaultBaselineFloodScale keeps the baseline's flood at N = 1,000
	// compressed: at DigitalOcean's own clock its 429s would stretch it past
	// half an hour, and its figures are not what the latency targets check.
	DefaultBaselineFloodScale = "1000=3"
	DefaultHold               = time.Hour
	DefaultProbes             = 20
	// Gargantua's VirtualMachineSet controller makes a scheduled event's VMs
	// in its one worker, one after the other: create, then the status write.
	DefaultCreateConcurrency = 1
	// A finished event's VMs are deleted by kube-controller-manager's garbage
	// collector (Gargantua deletes their VirtualMachineSets), 20 at a time
	// by its --concurrent-gc-syncs default.
	DefaultDeleteConcurrency = 20
)

func (c *Config) validate() error {
	switch {
	case len(c.Ns) == 0:
		return fmt.Errorf("no N given")
	case len(c.Modes) == 0:
		return fmt.Errorf("no mode given")
	case c.Scale <= 0:
		return fmt.Errorf("scale must be positive")
	case slices.ContainsFunc(slices.Concat(slices.Collect(maps.Values(c.FloodScale)), slices.Collect(maps.Values(c.BaselineFloodScale))),
		func(v float64) bool { return !(v > 0) }):
		return fmt.Errorf("flood scales must be positive")
	case c.Hold < 0:
		return fmt.Errorf("hold must not be negative")
	case c.CreateConcurrency < 1 || c.DeleteConcurrency < 1:
		return fmt.Errorf("create and delete concurrency must be at least 1")
	case c.Probes < 2 || c.Probes%2 != 0:
		return fmt.Errorf("probes must be an even number, at least 2")
	}
	for _, n := range c.Ns {
		if n < 1 {
			return fmt.Errorf("N must be positive, got %d", n)
		}
	}
	for _, m := range c.Modes {
		if m != ModeOurs && m != ModeBaseline {
			return fmt.Errorf("unknown mode %q (ours or baseline)", m)
		}
	}
	if err := validateVariants(c); err != nil {
		return err
	}
	for m, s := range c.KeyScope {
		if s != KeyScopeVM && s != KeyScopeEnvironment {
			return fmt.Errorf("key scope of %s: %q is not vm or environment", m, s)
		}
	}
	return nil
}

// FloodScaleOf is the scale of mode's flood phases at N: the baseline's
// own when BaselineFloodScale gives one, else FloodScaleFor.
func (c *Config) FloodScaleOf(m Mode, n int) float64 {
	if v, ok := c.BaselineFloodScale[n]; ok && m == ModeBaseline {
		return v
	}
	return c.FloodScaleFor(n)
}

// FloodScaleFor is the scale of the flood phases at N.
func (c *Config) FloodScaleFor(n int) float64 {
	if v, ok := c.FloodScale[n]; ok {
		return v
	}
	if v, ok := c.FloodScale[0]; ok {
		return v
	}
	return c.Scale
}

// ParseFloodScale reads -flood-scale: "100=1,1000=3" by N, or a bare number
// for every N not listed ("5", "5,1000=3"); empty is no entry at all.
func ParseFloodScale(s string) (map[int]float64, error) {
	out := map[int]float64{}
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		key, value, byN := strings.Cut(part, "=")
		n := 0
		if !byN {
			value = key
		} else {
			var err error
			if n, err = strconv.Atoi(strings.TrimSpace(key)); err != nil || n < 1 {
				return nil, fmt.Errorf("%q: N must be a positive integer", part)
			}
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil || !(v > 0) {
			return nil, fmt.Errorf("%q: the scale must be a positive number", part)
		}
		if _, dup := out[n]; dup {
			return nil, fmt.Errorf("%q: given twice", part)
		}
		out[n] = v
	}
	return out, nil
}

// timeScale is simulated seconds per real second.
type timeScale float64

// toReal is how long a simulated duration lasts at this scale.
func (s timeScale) toReal(sim time.Duration) time.Duration {
	return time.Duration(float64(sim) / float64(s))
}

// toSim is the simulated length of a real duration at this scale, in seconds.
func (s timeScale) toSim(real time.Duration) float64 {
	return real.Seconds() * float64(s)
}

// timeline turns real moments into simulated time: at the flood scale until
// the switch (the fake's retime between the flood and the hold), at the
// hold scale from then on, and at each later switch's scale after it (the
// large scenario's phases). It is written only by the scenario's goroutine,
// between phases.
type timeline struct {
	flood, hold timeScale
	switched    time.Time // zero until the switch
	later       []scaleSwitch
}

// scaleSwitch is a retime after the first: the scale from at on.
type scaleSwitch struct {
	at    time.Time
	scale timeScale
}

// switchTo records a retime at at: the first sets the hold's scale, later
// ones follow it.
func (t *timeline) switchTo(at time.Time, scale timeScale) {
	if t.switched.IsZero() {
		t.switched, t.hold = at, scale
		return
	}
	t.later = append(t.later, scaleSwitch{at: at, scale: scale})
}

// current is the scale now.
func (t *timeline) current() timeScale {
	switch {
	case len(t.later) > 0:
		return t.later[len(t.later)-1].scale
	case t.switched.IsZero():
		return t.flood
	}
	return t.hold
}

// sim is the simulated seconds from a to b (negative if b is before a),
// each stretch at the scale of its phase.
func (t *timeline) sim(a, b time.Time) float64 {
	if b.Before(a) {
		return -t.sim(b, a)
	}
	if t.switched.IsZero() {
		return t.flood.toSim(b.Sub(a))
	}
	total, from, scale := 0.0, a, t.flood
	for _, sw := range append([]scaleSwitch{{at: t.switched, scale: t.hold}}, t.later...) {
		if !sw.at.After(from) {
			scale = sw.scale
			continue
		}
		if !sw.at.Before(b) {
			break
		}
		total += scale.toSim(sw.at.Sub(from))
		from, scale = sw.at, sw.scale
	}
	return total + scale.toSim(b.Sub(from))
}

// Floor is the least simulated time N VMs can take to run: creating them at
// DigitalOcean's rate of PerMinute requests, then one boot delay.
func Floor(n int) time.Duration {
	return time.Duration(float64(n)/PerMinute*float64(time.Minute)) + BootDelay
}
