// Package sshprobe logs in to a machine the way Gargantua's shell will, to
// tell whether a user's terminal would open, and optionally asks cloud-init
// whether it has finished.
package sshprobe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// Reasons a probe reports; they become the Droplet's Reachable condition.
const (
	// ReasonLoggedIn: the key was accepted (and cloud-init is done, if asked).
	ReasonLoggedIn = "LoggedIn"
	// ReasonUnreachable: nothing answered at the address, or not as sshd.
	ReasonUnreachable = "Unreachable"
	// ReasonKeyRefused: sshd answered and refused the VM's key for the user.
	ReasonKeyRefused = "KeyRefused"
	// ReasonCloudInitRunning: logged in, cloud-init is still at work.
	ReasonCloudInitRunning = "CloudInitRunning"
	// ReasonCloudInitFailed: cloud-init finished with an error, or cannot be asked.
	ReasonCloudInitFailed = "CloudInitFailed"
)

// Target is where and how to log in.
type Target struct {
	// Addr is host:port.
	Addr   string
	User   string
	Signer ssh.Signer
	// CloudInit also asks `cloud-init status` once logged in.
	CloudInit bool
}

// Result is one probe's verdict.
type Result struct {
	OK      bool
	Reason  string
	Message string
}

// Probe makes one attempt within timeout. It never retries: the caller
// paces attempts.
func Probe(ctx context.Context, t Target, timeout time.Duration) Result {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client, err := dial(ctx, t)
	if err != nil {
		if isAuthFailure(err) {
			return Result{Reason: ReasonKeyRefused, Message: fmt.Sprintf(
				"sshd at %s refused the VM's key for user %q (%v): check ssh_username and that the image accepts DigitalOcean's SSH keys", t.Addr, t.User, err)}
		}
		return Result{Reason: ReasonUnreachable, Message: fmt.Sprintf("cannot log in at %s as %q yet: %v", t.Addr, t.User, err)}
	}
	defer client.Close()
	if !t.CloudInit {
		return Result{OK: true, Reason: ReasonLoggedIn, Message: fmt.Sprintf("logged in at %s as %q", t.Addr, t.User)}
	}
	return cloudInitStatus(ctx, client, t)
}

// dial connects and authenticates, giving up when ctx ends.
func dial(ctx context.Context, t Target) (*ssh.Client, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", t.Addr)
	if err != nil {
		return nil, err
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline) // bounds a handshake that stalls
	}
	cfg := &ssh.ClientConfig{
		User: t.User,
		Auth: []ssh.AuthMethod{ssh.PublicKeys(t.Signer)},
		// A new droplet's host key is known to nobody yet; Gargantua's shell
		// does not check it either. This login only proves the key works.
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), //nolint:gosec
	}
	c, chans, reqs, err := ssh.NewClientConn(conn, t.Addr, cfg)
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	client := ssh.NewClient(c, chans, reqs)
	go func() {
		<-ctx.Done()
		_ = client.Close() // ends a command that outlives the attempt
	}()
	return client, nil
}

func isAuthFailure(err error) bool {
	var sErr *ssh.ServerAuthError
	return errors.As(err, &sErr) || strings.Contains(err.Error(), "unable to authenticate")
}

// cloudInitStatus runs `cloud-init status` (without --wait, which would hold
// the connection for the whole run) and reads its one line.
func cloudInitStatus(ctx context.Context, client *ssh.Client, t Target) Result {
	session, err := client.NewSession()
	if err != nil {
		return Result{Reason: ReasonUnreachable, Message: fmt.Sprintf("logged in at %s but cannot run a command: %v", t.Addr, err)}
	}
	defer session.Close()
	out, err := session.CombinedOutput("cloud-init status")
	if ctx.Err() != nil {
		return Result{Reason: ReasonUnreachable, Message: fmt.Sprintf("logged in at %s but `cloud-init status` did not answer in time", t.Addr)}
	}
	status := parseStatus(string(out))
	var exit *ssh.ExitError
	switch {
	case status == "running" || status == "not run":
		return Result{Reason: ReasonCloudInitRunning, Message: fmt.Sprintf("logged in at %s; cloud-init status is %q", t.Addr, status)}
	case status == "done" || status == "disabled":
		// Exit status 2 is "done, with recoverable errors": the machine is up.
		return Result{OK: true, Reason: ReasonLoggedIn, Message: fmt.Sprintf("logged in at %s as %q; cloud-init is %s", t.Addr, t.User, status)}
	case status == "error":
		return Result{Reason: ReasonCloudInitFailed,
			Message: "cloud-init on the droplet finished with an error (`cloud-init status --long` on the droplet says why): fix the image or user_data"}
	case errors.As(err, &exit):
		return Result{Reason: ReasonCloudInitFailed, Message: fmt.Sprintf(
			"`cloud-init status` exited %d (%s): the image may lack cloud-init; use ready_check: ssh for it", exit.ExitStatus(), strings.TrimSpace(firstLine(string(out))))}
	default:
		return Result{Reason: ReasonCloudInitFailed, Message: fmt.Sprintf("`cloud-init status` answered %q, not a status", strings.TrimSpace(firstLine(string(out))))}
	}
}

// parseStatus finds "status: X" in cloud-init's output.
func parseStatus(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "status:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	if len(line) > 120 {
		line = line[:120]
	}
	return line
}
