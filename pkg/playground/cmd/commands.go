package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"syscall"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/playground"
)

// Exit codes of the commands.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// parseArgs parses fs's flags wherever they stand among args before a
// "--", so `ssh <vm> --print` works as well as `ssh --print <vm>`. It
// returns the other arguments, and those after "--".
func parseArgs(fs *flag.FlagSet, args []string) (positional, rest []string, err error) {
	if i := slices.Index(args, "--"); i >= 0 {
		args, rest = args[:i], args[i+1:]
	}
	for {
		if err := fs.Parse(args); err != nil {
			return nil, nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, rest, nil
		}
		if args[0] == "help" && len(positional) == 0 {
			return nil, nil, flag.ErrHelp
		}
		positional, args = append(positional, args[0]), args[1:]
	}
}

// usageResult reports a parse error (or prints the help) and returns the exit code.
func usageResult(name string, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		fmt.Print(usage)
		return exitOK
	}
	fmt.Fprintf(os.Stderr, "%s: %v (%s --help lists the commands)\n", name, err, command)
	return exitUsage
}

// result reports a command's error and returns the exit code.
func result(name string, err error) int {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return exitError
	}
	return exitOK
}

// interruptible is the context of a command that waits: Ctrl-C ends the wait.
func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// session runs `session start|end` and returns the exit code.
func session(args []string) int {
	name := command + " session"
	fs, user, state := sessionFlags()
	positional, _, err := parseArgs(fs, args)
	if err != nil {
		return usageResult(name, err)
	}
	ctx, stop := interruptible()
	defer stop()
	switch {
	case len(positional) == 1 && positional[0] == "start":
		_, err = playground.StartSession(ctx, *state, *user, os.Stdout)
	case len(positional) == 2 && positional[0] == "end":
		err = playground.EndSession(ctx, *state, positional[1], os.Stdout)
	default:
		return usageResult(name, fmt.Errorf("want start [--user U] or end <vm-or-session>, not %q", args))
	}
	return result(name, err)
}

func sessionFlags() (fs *flag.FlagSet, user, state *string) {
	fs = newFlagSet("session")
	user = fs.String("user", "alice", "user of the session (start)")
	state = new(string)
	stateFlag(fs, state)
	return fs, user, state
}

// vm runs `vm add|list|delete` and returns the exit code.
func vm(args []string) int {
	name := command + " vm"
	fs, opts, wait, state := vmFlags()
	positional, _, err := parseArgs(fs, args)
	if err != nil {
		return usageResult(name, err)
	}
	ctx, stop := interruptible()
	defer stop()
	switch {
	case len(positional) == 1 && positional[0] == "add":
		var names []string
		names, err = playground.AddVMs(*state, *opts, os.Stdout)
		if err == nil && *wait {
			err = playground.WaitVMsRunning(ctx, *state, names, os.Stdout)
		}
	case len(positional) == 1 && positional[0] == "list":
		err = playground.ListVMs(*state, os.Stdout)
	case len(positional) == 2 && positional[0] == "delete":
		err = playground.DeleteVM(ctx, *state, positional[1], os.Stdout)
	default:
		return usageResult(name, fmt.Errorf("want add, list or delete <vm>, not %q", args))
	}
	return result(name, err)
}

func vmFlags() (fs *flag.FlagSet, opts *playground.AddVMOptions, wait *bool, state *string) {
	fs = newFlagSet("vm")
	opts = &playground.AddVMOptions{}
	fs.StringVar(&opts.Template, "template", "", "template of the VMs (add); default the playground's")
	fs.IntVar(&opts.Count, "count", 1, "how many VMs to add")
	fs.StringVar(&opts.User, "user", "", "user of the VMs (add)")
	wait = fs.Bool("wait", false, "wait until the added VMs run")
	state = new(string)
	stateFlag(fs, state)
	return fs, opts, wait, state
}

// sshCommand runs `ssh <vm> [--print] [-- command...]` and returns the exit
// code: ssh's own once it ran.
func sshCommand(args []string) int {
	name := command + " ssh"
	fs, printOnly, state := sshFlags()
	positional, rest, err := parseArgs(fs, args)
	if err != nil {
		return usageResult(name, err)
	}
	if len(positional) == 0 {
		return usageResult(name, errors.New("which VM? scripts/playground vm list shows them"))
	}
	line, err := playground.SSHCommand(*state, positional[0], append(positional[1:], rest...))
	if err != nil {
		return result(name, err)
	}
	if *printOnly {
		fmt.Println(playground.ShellLine(line))
		return exitOK
	}
	ssh, err := exec.LookPath(line[0])
	if err != nil {
		return result(name, fmt.Errorf("%w (install openssh-client; --print shows the command)", err))
	}
	cmd := exec.Command(ssh, line[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// The terminal's Ctrl-C reaches ssh too; this process only waits for it.
	signal.Notify(make(chan os.Signal, 1), os.Interrupt, syscall.SIGTERM)
	err = cmd.Run()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return exitErr.ExitCode()
	}
	return result(name, err)
}

func sshFlags() (fs *flag.FlagSet, printOnly *bool, state *string) {
	fs = newFlagSet("ssh")
	printOnly = fs.Bool("print", false, "print the ssh command instead of running it")
	state = new(string)
	stateFlag(fs, state)
	return fs, printOnly, state
}
