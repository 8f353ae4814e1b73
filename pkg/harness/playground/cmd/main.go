// Command playground runs the provisioner against a local control plane and
// the fake DigitalOcean API until Ctrl-C (see scripts/playground); its
// subcommands (vm, ssh, session) act on the playground running in another
// terminal. usage.txt, also printed by scripts/playground itself for --help
// without building anything, documents all of it.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/playground"
)

// usage is the one help text of the program and of scripts/playground.
//
//go:embed usage.txt
var usage string

// command is what the usage line and error messages call the program: the
// script users run, not the binary's path in the cache.
const command = "scripts/playground"

func main() {
	args := os.Args[1:]
	if len(args) > 0 {
		switch args[0] {
		case "help":
			fmt.Print(usage)
			return
		case "session":
			os.Exit(session(args[1:]))
		case "vm":
			os.Exit(vm(args[1:]))
		case "ssh":
			os.Exit(sshCommand(args[1:]))
		}
	}
	fs, opts := runFlags()
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Print(usage)
			os.Exit(0)
		}
		fmt.Fprintf(os.Stderr, "%s: %v (%s --help lists the flags)\n", command, err, command)
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "%s: unexpected arguments %q (%s --help lists the commands)\n", command, fs.Args(), command)
		os.Exit(2)
	}

	// Ctrl-C signals the terminal's whole process group; etcd and kube-apiserver
	// must survive it to let cleanup delete the droplets.
	if code, ran := runInOwnProcessGroup(); ran {
		os.Exit(code)
	}

	// Registered before the first signal can arrive, so the second one is never missed.
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	abort := make(chan struct{})
	go func() {
		<-signals // the first one ends ctx
		<-signals
		fmt.Fprintln(os.Stderr, "second interrupt: aborting cleanup")
		close(abort)
	}()

	opts.Abort = abort
	if err := playground.Run(ctx, *opts, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", command, err)
		stop()
		os.Exit(1)
	}
}

// runFlags are the flags of the playground itself.
func runFlags() (*flag.FlagSet, *playground.Options) {
	fs := newFlagSet(command)
	opts := &playground.Options{Gargantua: gargantuasim.V1_0}
	fs.IntVar(&opts.VMs, "vms", 3, "number of VMs made at start")
	fs.DurationVar(&opts.BootDelay, "boot-delay", 3*time.Second, "how long a fake droplet stays new before it is active")
	fs.BoolVar(&opts.Keep, "keep", false, "keep the temp dir (kubeconfig, logs, key files) after exit")
	fs.TextVar(&opts.Gargantua, "gargantua", gargantuasim.V1_0, "Gargantua version to play: v1.0, v3.0 or v3.3")
	fs.Func("warm-pool", "warm_pool of the playground's Environment: a size or auto", func(v string) error {
		opts.WarmPool = v
		return playground.CheckWarmPool(v)
	})
	stateFlag(fs, &opts.StatePath)
	return fs, opts
}

// stateFlag is the state file the running playground writes and the commands read.
func stateFlag(fs *flag.FlagSet, path *string) {
	fs.StringVar(path, "state", playground.DefaultStatePath(), "state file of the running playground")
}

// newFlagSet makes a flag set whose errors the caller reports: its own
// output would be Go's default usage, not usage.txt.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}
