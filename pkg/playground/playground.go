// Package playground runs the whole provisioner on one machine: a real
// control plane (testenv), the fake DigitalOcean API and the controller,
// with a few VMs created the way Gargantua creates them.
package playground

import (
	"context"
	"fmt"
	"io"
	"time"
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
	// BaseDir is where the temp dir is made; default the system temp dir.
	BaseDir string
	// Abort, once closed, cuts cleanup short (a second Ctrl-C).
	Abort <-chan struct{}
	// OnReady is called once all VMs run and the ssh command is verified.
	OnReady func()
	// Result, if set, is filled in before Run returns.
	Result *Result
}

// Result is what a run leaves behind, for callers that check cleanup.
type Result struct {
	Dir          string
	DropletsLeft int
	KeysLeft     int
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
	names, err := p.createVMs()
	if err != nil {
		return err
	}
	if err := p.showReady(ctx, names); err != nil {
		if err := p.unlessInterrupted(ctx, err); err != nil {
			return err
		}
	} else {
		<-ctx.Done()
		fmt.Fprintln(out)
	}
	return p.deleteVMs(names)
}

// showReady waits for the VMs and prints the hints.
func (p *playground) showReady(ctx context.Context, names []string) error {
	if err := p.waitRunning(ctx, names); err != nil {
		return err
	}
	if err := p.printHints(names[0]); err != nil {
		return err
	}
	if p.opts.OnReady != nil {
		p.opts.OnReady()
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
