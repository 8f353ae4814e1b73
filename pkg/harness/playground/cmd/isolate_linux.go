package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
)

// isolatedEnv marks the re-executed child, which does the actual work.
const isolatedEnv = "HF_PLAYGROUND_ISOLATED"

// runInOwnProcessGroup re-runs this program in a new process group (so its
// etcd and kube-apiserver do not get the terminal's SIGINT) and relays
// SIGINT/SIGTERM to it alone. It reports whether it did, with the child's exit code.
func runInOwnProcessGroup() (code int, ran bool) {
	if os.Getenv(isolatedEnv) == "1" {
		return 0, false
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "playground:", err)
		return 1, true
	}
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Env = append(os.Environ(), isolatedEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// If this relay dies (e.g. the terminal closes), the child still cleans up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	// Pdeathsig follows the forking thread, so keep this one for the child's life.
	runtime.LockOSThread()

	signals := make(chan os.Signal, 4)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "playground:", err)
		return 1, true
	}
	go func() {
		for s := range signals {
			_ = cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return 0, true
	case errors.As(err, &exitErr):
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), true
		}
		return exitErr.ExitCode(), true
	default:
		fmt.Fprintln(os.Stderr, "playground:", err)
		return 1, true
	}
}
