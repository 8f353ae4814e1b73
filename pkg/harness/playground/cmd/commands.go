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

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/playground"
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

// verb is one subcommand of a command group, such as `vm add`.
type verb struct {
	name string
	// args is how many arguments it takes after its name.
	args int
	run  func(ctx context.Context, args []string) error
}

// runVerb parses args with fs and runs the verb they name, Ctrl-C ending
// its wait; want lists the verbs for the usage error. It returns the exit code.
func runVerb(name string, fs *flag.FlagSet, args []string, want string, verbs ...verb) int {
	positional, _, err := parseArgs(fs, args)
	if err != nil {
		return usageResult(name, err)
	}
	for _, v := range verbs {
		if len(positional) == 1+v.args && positional[0] == v.name {
			ctx, stop := interruptible()
			defer stop()
			return result(name, v.run(ctx, positional[1:]))
		}
	}
	return usageResult(name, fmt.Errorf("want %s, not %q", want, args))
}

// session runs `session start|end` and returns the exit code.
func session(args []string) int {
	fs, user, state := sessionFlags()
	return runVerb(command+" session", fs, args, "start [--user U] or end <vm-or-session>",
		verb{"start", 0, func(ctx context.Context, _ []string) error {
			_, err := playground.StartSession(ctx, *state, *user, os.Stdout)
			return err
		}},
		verb{"end", 1, func(ctx context.Context, args []string) error {
			return playground.EndSession(ctx, *state, args[0], os.Stdout)
		}},
	)
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
	fs, opts, wait, state := vmFlags()
	return runVerb(command+" vm", fs, args, "add, list or delete <vm>",
		verb{"add", 0, func(ctx context.Context, _ []string) error {
			names, err := playground.AddVMs(*state, *opts, os.Stdout)
			if err == nil && *wait {
				err = playground.WaitVMsRunning(ctx, *state, names, os.Stdout)
			}
			return err
		}},
		verb{"list", 0, func(context.Context, []string) error { return playground.ListVMs(*state, os.Stdout) }},
		verb{"delete", 1, func(ctx context.Context, args []string) error {
			return playground.DeleteVM(ctx, *state, args[0], os.Stdout)
		}},
	)
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
