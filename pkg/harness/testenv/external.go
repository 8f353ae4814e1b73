package testenv

import "context"

// Process is a program run beside an Env, such as the controller binary, with
// the handling the Env's own processes get: output appended to a log file,
// killed when this program dies, stopped with SIGTERM then SIGKILL.
type Process struct{ p *process }

// StartProcess starts path with args, its output going to logPath.
func StartProcess(name, path string, args []string, logPath string) (*Process, error) {
	p := &process{name: name, path: path, args: args, logPath: logPath}
	if err := p.start(); err != nil {
		return nil, err
	}
	return &Process{p: p}, nil
}

// Pid is the process id.
func (p *Process) Pid() int { return p.p.pid() }

// Exited is closed once the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.p.exited() }

// WaitReady polls check until it succeeds; it fails, with the log's tail, if
// the process exits or ctx ends first.
func (p *Process) WaitReady(ctx context.Context, check func(context.Context) error) error {
	return p.p.waitReady(ctx, check)
}

// Stop sends SIGTERM, then SIGKILL after 5 s, and waits for the exit.
func (p *Process) Stop() { p.p.stop() }

// LogTail is the last n lines of the log.
func (p *Process) LogTail(n int) string { return p.p.logTail(n) }

// Pids are the process ids of the Env's etcd, kube-apiserver and
// kube-controller-manager, by those names, e.g. to read their CPU time.
func (e *Env) Pids() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]int{}
	for _, p := range []*process{e.etcd, e.apiserver, e.controllerManager} {
		if p != nil {
			if pid := p.pid(); pid > 0 {
				out[p.name] = pid
			}
		}
	}
	return out
}

// FreePort is a loopback port that was free a moment ago.
func FreePort() (int, error) {
	ports, err := freePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}
