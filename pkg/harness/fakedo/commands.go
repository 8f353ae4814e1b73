package fakedo

import (
	"io"
	"strings"
	"time"
)

// cloudInitWaitLimit bounds `cloud-init status --wait`, so a guest stuck
// in "running" cannot hold a session forever.
const cloudInitWaitLimit = 5 * time.Minute

// cloudInitDotEvery is how often `cloud-init status --wait` prints a dot.
const cloudInitDotEvery = time.Second

// shell is just enough of a droplet's shell for a client to prove which
// droplet it logged into and to wait for cloud-init; ssh.go lists the
// commands.
type shell struct {
	hostname string
	guest    guestOS
}

// run executes cmd, writing its output to out, and returns the exit
// status. gone is closed when the session ends.
func (sh shell) run(out io.Writer, cmd string, gone <-chan struct{}) uint32 {
	cmd = strings.TrimSpace(cmd)
	if wait, long, ok := parseCloudInitStatus(cmd); ok {
		return sh.cloudInitStatus(out, wait, long, gone)
	}
	_, _ = io.WriteString(out, fakeCommandOutput(cmd, sh.hostname))
	return 0
}

func fakeCommandOutput(cmd, hostname string) string {
	switch {
	case cmd == "hostname":
		return hostname + "\n"
	case cmd == "echo":
		return "\n"
	case strings.HasPrefix(cmd, "echo "):
		return strings.TrimPrefix(cmd, "echo ") + "\n"
	}
	return "fake droplet\n"
}

// parseCloudInitStatus recognises `cloud-init status` with the flags the
// fake models; ok is false for anything else.
func parseCloudInitStatus(cmd string) (wait, long, ok bool) {
	f := strings.Fields(cmd)
	if len(f) < 2 || f[0] != "cloud-init" || f[1] != "status" {
		return false, false, false
	}
	for _, flag := range f[2:] {
		switch flag {
		case "--wait", "-w":
			wait = true
		case "--long", "-l":
			long = true
		default:
			return false, false, false
		}
	}
	return wait, long, true
}

func (sh shell) cloudInitStatus(out io.Writer, wait, long bool, gone <-chan struct{}) uint32 {
	state := CloudInitRunning
	if !wait {
		state = sh.guest.cloudInit().state
	} else if s, ok := sh.waitCloudInit(out, gone); ok {
		state = s
	} else {
		return 1 // nobody is left to read the answer
	}
	_, _ = io.WriteString(out, cloudInitReport(state, long))
	return state.exitStatus()
}

// waitCloudInit prints a dot a second while cloud-init runs and returns its
// state once it stops, or "running" after cloudInitWaitLimit. It wakes at
// once when SetGuest changes the droplet or CloudInitDelay ends. ok is
// false when the session ended first.
func (sh shell) waitCloudInit(out io.Writer, gone <-chan struct{}) (state CloudInitResult, ok bool) {
	limit := time.NewTimer(cloudInitWaitLimit)
	defer limit.Stop()
	dots := time.NewTicker(cloudInitDotEvery)
	defer dots.Stop()
	dotted := false
	v := sh.guest.cloudInit()
wait:
	for v.state == CloudInitRunning {
		select {
		case <-v.changed:
		case <-after(v.next):
		case <-dots.C:
			if _, err := io.WriteString(out, "."); err != nil {
				return "", false
			}
			dotted = true
		case <-limit.C:
			break wait
		case <-gone:
			return "", false
		}
		v = sh.guest.cloudInit()
	}
	if dotted {
		_, _ = io.WriteString(out, "\n")
	}
	return v.state, true
}

// after is time.After, or a channel that never fires for d <= 0.
func after(d time.Duration) <-chan time.Time {
	if d <= 0 {
		return nil
	}
	return time.After(d)
}

// cloudInitReport is the answer of `cloud-init status [--long]`.
func cloudInitReport(state CloudInitResult, long bool) string {
	report := "status: " + string(state) + "\n"
	if !long {
		return report
	}
	errs := "[]"
	if state == CloudInitError {
		errs = `["fake: Guest.CloudInit is error"]`
	}
	return report + "extended_status: " + string(state) + "\n" +
		"detail: DataSourceDigitalOcean\n" +
		"errors: " + errs + "\n"
}
