// Command playground runs the provisioner against a local control plane and
// the fake DigitalOcean API until Ctrl-C (see scripts/playground); its
// session subcommands start and end user sessions in the running playground.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/playground"
)

const usage = `Usage:
  scripts/playground [flags]                      run until Ctrl-C
  scripts/playground session start [--user U]     start a user session in the running playground
  scripts/playground session end <vm-or-session>  end it

The playground runs etcd, kube-apiserver and kube-controller-manager, the fake
DigitalOcean API and the controller, and makes VMs as Gargantua does:
  --gargantua v1.0  on-demand VMs, one per user claim (the go.mod version; default)
  --gargantua v3.0  a scheduled event's VM set of static VMs (also v3.0.1-rc0)
  --gargantua v3.3  the same, plus v3.1+'s deletion of tainted VMs (also v3.1, v3.2.x)
A session binds a free static VM to a user (v1.0: makes an on-demand VM); ending
it taints the VM, the controller deletes it and its droplet, and the VM set makes
a replacement. Ctrl-C deletes every VM and stops.

Flags:
`

func main() {
	args := os.Args[1:]
	if len(args) > 0 {
		switch args[0] {
		case "help":
			fmt.Print(usage)
			runFlags().PrintDefaults()
			return
		case "session":
			os.Exit(session(args[1:]))
		}
	}
	fs := runFlags()
	vms := fs.Int("vms", 3, "number of VMs to create")
	bootDelay := fs.Duration("boot-delay", 3*time.Second, "how long a fake droplet stays new before it is active")
	keep := fs.Bool("keep", false, "keep the temp dir (kubeconfig, logs, key) after exit")
	version := gargantuasim.V1_0
	fs.TextVar(&version, "gargantua", gargantuasim.V1_0, "Gargantua version to play: v1.0 (claim path), v3.0 or v3.3 (VM set path)")
	state := fs.String("state", playground.DefaultStatePath(), "state file for the session subcommands")
	_ = fs.Parse(args) // ExitOnError

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

	err := playground.Run(ctx, playground.Options{
		VMs: *vms, BootDelay: *bootDelay, Keep: *keep, Abort: abort, Gargantua: version, StatePath: *state,
	}, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "playground:", err)
		stop()
		os.Exit(1)
	}
}

// runFlags are the flags of the playground itself.
func runFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("playground", flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	return fs
}

const sessionUsage = `Usage:
  scripts/playground session start [--user U]     bind a free static VM to user U (v1.0: make an
                                                  on-demand VM); print its name, IP and an ssh command
  scripts/playground session end <vm-or-session>  end the session of a VM (or session, or claim):
                                                  the VM is tainted, the controller deletes it and its
                                                  droplet, and the VM set makes a replacement
They act on the playground running in another terminal (scripts/playground).

Flags:
`

// session runs `session start|end` and returns the exit code.
func session(args []string) int {
	fs := flag.NewFlagSet("session", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	printUsage := func(w io.Writer) {
		fmt.Fprint(w, sessionUsage)
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	user := fs.String("user", "alice", "user of the session (start)")
	state := fs.String("state", playground.DefaultStatePath(), "state file of the running playground")
	if len(args) == 0 {
		printUsage(os.Stderr)
		return 2
	}
	cmd := args[0]
	if cmd == "-h" || cmd == "--help" || cmd == "help" {
		printUsage(os.Stdout)
		return 0
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(os.Stdout)
			return 0
		}
		fmt.Fprintln(os.Stderr, "playground session:", err)
		printUsage(os.Stderr)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch {
	case cmd == "start" && fs.NArg() == 0:
		_, err = playground.StartSession(ctx, *state, *user, os.Stdout)
	case cmd == "end" && fs.NArg() == 1:
		err = playground.EndSession(ctx, *state, fs.Arg(0), os.Stdout)
	default:
		fmt.Fprintf(os.Stderr, "playground session: unexpected arguments %q\n", args)
		printUsage(os.Stderr)
		return 2
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "playground session:", err)
		return 1
	}
	return 0
}
