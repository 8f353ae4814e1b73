package testenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long a process gets to exit after SIGTERM before it is killed.
const stopGrace = 5 * time.Second

// process is one binary of the Env, restartable with the same arguments;
// every run appends to the same log file.
type process struct {
	name    string
	path    string
	args    []string
	logPath string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when the current run has exited
	err  error         // exit error of the last run, valid once done is closed
}

func (p *process) start() error {
	logFile, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(logFile, "==> %s %s %s\n", time.Now().Format(time.RFC3339Nano), p.path, strings.Join(p.args, " "))

	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		// Pdeathsig fires when the *thread* that forked the child exits. Go may end a
		// thread whenever a locked goroutine returns, so hold this thread for the child's life.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer logFile.Close()

		cmd := exec.Command(p.path, p.args...)
		cmd.Stdout, cmd.Stderr = logFile, logFile
		cmd.SysProcAttr = childSysProcAttr()
		if err := cmd.Start(); err != nil {
			started <- fmt.Errorf("start %s: %w", p.name, err)
			return
		}
		p.mu.Lock()
		p.cmd, p.done = cmd, done
		p.mu.Unlock()
		started <- nil

		err := cmd.Wait()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(done)
	}()
	return <-started
}

// exited returns a channel closed when the current run ends (nil if never started).
func (p *process) exited() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done
}

// pid is the current run's process id, 0 if never started.
func (p *process) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

func (p *process) exitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// stop sends SIGTERM, then SIGKILL after stopGrace, and waits for the exit.
func (p *process) stop() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(stopGrace):
		_ = cmd.Process.Kill()
		<-done
	}
}

// logTail returns the last n lines of the process log, for error messages.
func (p *process) logTail(n int) string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", p.logPath, err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// failure builds an error for a process that did not come up, with its log tail.
func (p *process) failure(cause error) error {
	return fmt.Errorf("%s: %w\n--- last lines of %s ---\n%s\n---", p.name, cause, p.logPath, p.logTail(40))
}

// waitReady polls check until it succeeds, the process exits or ctx ends.
func (p *process) waitReady(ctx context.Context, check func(context.Context) error) error {
	ticker := time.NewTicker(50 * time.Millisecond)
	defer ticker.Stop()
	var last error
	for {
		attemptCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		last = check(attemptCtx)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-p.exited():
			return p.failure(fmt.Errorf("exited before ready (%v)", p.exitErr()))
		case <-ctx.Done():
			return p.failure(fmt.Errorf("not ready: %w (last check: %v)", ctx.Err(), last))
		case <-ticker.C:
		}
	}
}
