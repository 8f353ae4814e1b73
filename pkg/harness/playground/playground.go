// Package playground runs the whole provisioner on one machine: a real
// control plane (testenv), the fake DigitalOcean API and the controller,
// with a few VMs created the way Gargantua creates them.
package playground

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
)

// Fixed names, so that the printed hints are the same on every run.
const (
	Namespace    = "hobbyfarm"
	Token        = "dop_v1_playground"
	TokenSecret  = "do-token"
	TemplateName = "ubuntu"
	EnvName      = "do-playground"
	Image        = "ubuntu-22-04-x64"
	Size         = "s-1vcpu-1gb"
	Region       = "nyc1"
	// VMSetName is the scheduled event's VM set of the static path; its VMs
	// are named VMSetName-<random>.
	VMSetName = "pg-set"
	EventName = "pg-event"
)

// Timeouts of the steps that wait on the controller.
const (
	controllerReadyTimeout = 30 * time.Second
	runningTimeout         = 2 * time.Minute
	cleanupTimeout         = 60 * time.Second
	pollInterval           = 500 * time.Millisecond
)

// Options tune Run. The zero value is the playground's default.
type Options struct {
	VMs       int           // default 3
	BootDelay time.Duration // how long a fake droplet stays "new"; default 3s
	Keep      bool          // keep the temp dir (kubeconfig, logs, etcd data)
	// Gargantua is the Gargantua version played. V1_0 (the zero value, the
	// go.mod version) makes on-demand VMs (the claim path); V3_0 and V3_3
	// make a scheduled event's VM set of static VMs and run the simulated
	// Gargantua's reactive loops.
	Gargantua gargantuasim.Version
	// WarmPool, if set, is the Environment's warm_pool (a size or "auto"):
	// a running scheduled event asks for the template, and the VMs are made
	// once the pool is ready, so each takes one of its droplets.
	WarmPool string
	// StatePath, if set, is where the state file for the helper commands
	// (session, vm, ssh) is written once the VMs exist; it is removed when
	// Run stops.
	StatePath string
	// BaseDir is where the temp dir is made; default the system temp dir.
	BaseDir string
	// Abort, once closed, cuts cleanup short (a second Ctrl-C).
	Abort <-chan struct{}
	// OnReady is called once all VMs run and the ssh command is verified.
	OnReady func()
	// Result, if set, is filled in before Run returns.
	Result *Result

	// faults and cleanupFaults, if set, are what goes wrong at the fake
	// from the start and once cleanup starts (tests of a cleanup that
	// cannot finish).
	faults, cleanupFaults *fakedo.Faults
}

// Result is what a run leaves behind, for callers that check cleanup.
type Result struct {
	Dir          string
	DropletsLeft int
	KeysLeft     int
	// Claimed counts the VMs made at start that took a warm pool droplet.
	Claimed int
}

func (o *Options) defaults() {
	if o.VMs <= 0 {
		o.VMs = 3
	}
	if o.BootDelay == 0 {
		o.BootDelay = 3 * time.Second
	}
	if o.Result == nil {
		o.Result = &Result{}
	}
}

// Run starts everything, creates the VMs, prints how to look at them, and
// once ctx ends deletes the VMs, waits for the fake to be empty and stops.
// Anything set up is torn down on every path; on failure the temp dir is kept.
func Run(ctx context.Context, opts Options, out io.Writer) (err error) {
	opts.defaults()
	p := &playground{opts: opts, out: out}
	if err := p.makeDir(); err != nil {
		return err
	}
	defer func() {
		if tdErr := p.teardown(err != nil); err == nil {
			err = tdErr
		}
	}()

	if err := p.start(ctx); err != nil {
		return p.unlessInterrupted(ctx, err)
	}
	if err := p.fillPool(ctx); err != nil {
		return p.unlessInterrupted(ctx, err)
	}
	names, err := p.createVMs()
	if err != nil {
		return err
	}
	if err := p.writeState(); err != nil {
		return err
	}
	if err := p.showReady(ctx, names); err != nil {
		if err := p.unlessInterrupted(ctx, err); err != nil {
			return err
		}
	} else if err := p.follow(ctx); err != nil {
		return err
	}
	if p.opts.cleanupFaults != nil {
		p.do.SetFaults(*p.opts.cleanupFaults)
	}
	return p.deleteVMs()
}

// static reports whether the playground plays the VM set (static VM) path.
func (p *playground) static() bool { return p.opts.Gargantua >= gargantuasim.V3_0 }

// describeGargantua is the one or two lines saying which Gargantua is played.
func describeGargantua(v gargantuasim.Version) string {
	switch v {
	case gargantuasim.V1_0:
		return "playing Gargantua v1.0 (the go.mod version): on-demand VMs, each made for a user's claim as a session starts"
	case gargantuasim.V3_0:
		return "playing Gargantua v3.0 (v3.0.1-rc0): a scheduled event's VM set of static VMs, made before any user;\n" +
			"a session binds a free one, and once ended the provisioner deletes it and the set makes a replacement"
	default:
		return "playing Gargantua " + v.String() + " (v3.1.0 to v3.3.x): a scheduled event's VM set of static VMs, made before any user;\n" +
			"a session binds a free one, and once ended Gargantua and the provisioner delete it and the set makes a replacement"
	}
}

// showReady waits for the VMs and prints the hints.
func (p *playground) showReady(ctx context.Context, names []string) error {
	if err := p.waitRunning(ctx, names); err != nil {
		return err
	}
	if err := p.printHints(names[0]); err != nil {
		return err
	}
	p.reportClaims(names)
	if p.opts.OnReady != nil {
		p.opts.OnReady()
	}
	if p.opts.StatePath != "" {
		fmt.Fprintln(p.out, "\nlog in to each VM (the fake droplet answers hostname, echo, cloud-init status; it is no real shell):")
		for _, name := range names {
			p.printSSHHint(name)
		}
		fmt.Fprintf(p.out, "\nadd a VM as Gargantua does: scripts/playground vm add [--template T] [--count N]\n")
		fmt.Fprintf(p.out, "list, delete VMs:           scripts/playground vm list, scripts/playground vm delete <vm>\n")
		fmt.Fprintf(p.out, "start a user session:       scripts/playground session start --user alice\n")
		fmt.Fprintf(p.out, "end it:                     scripts/playground session end <vm-or-session>\n")
		fmt.Fprintf(p.out, "all commands:               scripts/playground --help\n")
	}
	fmt.Fprintln(p.out, "\npress Ctrl-C to delete the VMs and stop")
	return nil
}

// unlessInterrupted drops err when ctx ended: a Ctrl-C before the
// playground was ready is the user's choice, not a failure to report.
func (p *playground) unlessInterrupted(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	fmt.Fprintln(p.out, "interrupted before the playground was ready")
	return nil
}
