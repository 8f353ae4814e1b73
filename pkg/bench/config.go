// Package bench runs the controller binary against a real kube-apiserver
// (testenv) and the fake DigitalOcean API with DigitalOcean's limits and the
// controller's periods scaled down in time, creates, holds and deletes N VMs
// the way Gargantua does, and compares the controller's modes (see
// docs/benchmarks.md). It is a program, not a test: pkg/bench/cmd runs it.
package bench

import (
	"fmt"
	"io"
	"time"
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
// them divided by Config.Scale.
const (
	PerMinute = 250
	PerHour   = 5000
	// BootDelay is how long a droplet takes to turn active.
	BootDelay = 30 * time.Second
	// deleteLag keeps deleted droplets in lists a moment, as DigitalOcean does.
	deleteLag = 2 * time.Second

	bootResync           = 5 * time.Second
	ourActiveResync      = time.Minute
	baselineActiveResync = 30 * time.Second
	sweepInterval        = 10 * time.Minute
	// orphanGrace is not scaled: it is a margin against Kubernetes latency,
	// which the scale does not shorten, and scaled it would let the sweep
	// take a slow VM's key or droplet for an orphan.
	orphanGrace = 10 * time.Minute
	// The controller's own kube client defaults, scaled with the clock so its
	// Kubernetes work keeps pace with the compressed DigitalOcean time; what
	// the apiserver cannot keep up with shows as wall time above the floor.
	kubeQPS   = 50
	kubeBurst = 100
)

// Config is one benchmark run.
type Config struct {
	// Ns are the fleet sizes, run in this order.
	Ns []int
	// Modes run for every N, in this order.
	Modes []Mode
	// Scale is simulated seconds per real second.
	Scale float64
	// Hold is the simulated steady state between all running and deleting all.
	Hold time.Duration
	// KeyScope is the Environment's ssh_key_scope per mode; vm when unset.
	KeyScope map[Mode]string
	// Concurrency is how many VM creates or deletes the simulated Gargantua has in flight.
	Concurrency int
	// Probes is the number of VMs made before the flood: half are deleted
	// while idle, half during the flood, to time deletions.
	Probes int
	// Workers is the controller's --workers; 0 keeps its default.
	Workers int
	// Unlimited turns DigitalOcean's rate limits off, in the fake and in the
	// controller, to measure what Kubernetes alone allows (the kube floor).
	Unlimited bool
	// ControllerBin is a prebuilt controller; empty builds it into Dir.
	ControllerBin string
	// Dir keeps the logs and metrics of every scenario.
	Dir string
	// Log receives progress lines.
	Log io.Writer
}

// Defaults used by pkg/bench/cmd.
const (
	DefaultScale       = 15
	DefaultHold        = time.Hour
	DefaultConcurrency = 20
	DefaultProbes      = 20
)

func (c *Config) validate() error {
	switch {
	case len(c.Ns) == 0:
		return fmt.Errorf("no N given")
	case len(c.Modes) == 0:
		return fmt.Errorf("no mode given")
	case c.Scale <= 0:
		return fmt.Errorf("scale must be positive")
	case c.Hold < 0:
		return fmt.Errorf("hold must not be negative")
	case c.Concurrency < 1:
		return fmt.Errorf("concurrency must be at least 1")
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
	for m, s := range c.KeyScope {
		if s != KeyScopeVM && s != KeyScopeEnvironment {
			return fmt.Errorf("key scope of %s: %q is not vm or environment", m, s)
		}
	}
	return nil
}

// toReal is how long a simulated duration lasts on this run's clock.
func (c *Config) toReal(sim time.Duration) time.Duration {
	return time.Duration(float64(sim) / c.Scale)
}

// toSim is the simulated length of a real duration, in seconds.
func (c *Config) toSim(real time.Duration) float64 {
	return real.Seconds() * c.Scale
}

// Floor is the least simulated time N VMs can take to run: creating them at
// DigitalOcean's rate of PerMinute requests, then one boot delay.
func Floor(n int) time.Duration {
	return time.Duration(float64(n)/PerMinute*float64(time.Minute)) + BootDelay
}
