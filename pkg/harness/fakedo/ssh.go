// # SSH
//
// With Options.SSH each active droplet runs an SSH server on its public
// and its private IPv4, both at the one port Server.SSHPort reports, while
// its Guest lets sshd up (see Guest and SetGuest); until then nothing
// listens there and connections are refused, as on a booting VM. Deleting
// the droplet, powering it off or closing the Server stops the server and
// cuts its sessions. Where 127.x addresses other than 127.0.0.1 cannot be
// bound (macOS) a droplet falls back to 127.0.0.1 at a port of its own,
// reported by SSHAddr; on Linux it never does.
//
// All droplets present the host key HostPublicKey. Any user name may log
// in with a public key the droplet was created with, unless
// Guest.RefuseKeys. Exec requests are answered as below, each output line
// ending in a newline; a shell request prints one line and exits 0.
//
//	hostname                  the droplet's name; exit 0
//	echo [words]              the words; exit 0
//	cloud-init status         "status: running", "status: done" (exit 0) or
//	                          "status: error" (exit 1), as cloud-init >= 23.4
//	cloud-init status --long  the same status line and exit code, then
//	                          extended_status, detail and errors lines
//	cloud-init status --wait  while running a "." a second (and then a newline),
//	                          then the status line and exit code as above; it
//	                          gives up after 5 minutes with "status: running"
//	anything else             "fake droplet"; exit 0
//
// The short flags -w and -l and --wait --long together work as well.
//
// That is all: it is no real shell and no real machine. No files, users or
// processes are behind it, so scp and sftp (subsystems are refused), port
// and agent forwarding (only session channels are accepted) and interactive
// programs do not work; a pty is granted but changes nothing, and nothing
// is kept from one command to the next. `scripts/playground ssh <vm>` logs
// in to a playground VM's droplet this way.
package fakedo

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// sshHost is the identity shared by all fake droplets of one Server.
type sshHost struct {
	signer ssh.Signer
}

func newSSHHost() (*sshHost, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, err
	}
	return &sshHost{signer: signer}, nil
}

// HostPublicKey is the SSH host key every fake droplet presents, for tests
// that verify host keys; nil when Options.SSH is off.
func (s *Server) HostPublicKey() ssh.PublicKey {
	if s.ssh == nil {
		return nil
	}
	return s.ssh.signer.PublicKey()
}

// guestOS is what a droplet's sshd asks of the droplet, live, at each
// login and command.
type guestOS interface {
	acceptsKey(wireKey []byte) bool
	cloudInit() cloudInitView
}

// cloudInitView is cloud-init's state at one moment.
type cloudInitView struct {
	state   CloudInitResult
	next    time.Duration   // until state changes by time alone; 0 if it will not
	changed <-chan struct{} // closed when SetGuest changes the droplet
}

// sshd is one droplet's SSH server.
type sshd struct {
	ips      []string // the droplet addresses asked for, public first
	lns      []net.Listener
	fallback bool // lns is one 127.0.0.1 listener instead of ips

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

var errNotAuthorized = errors.New("fake: public key not authorized")

// start serves SSH for a droplet on ips at the shared port.
func (h *sshHost) start(ports *sshPorts, ips []string, hostname string, guest guestOS) (*sshd, error) {
	lns, fallback, err := ports.listen(ips)
	if err != nil {
		return nil, err
	}
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if guest.acceptsKey(key.Marshal()) {
				return &ssh.Permissions{}, nil
			}
			return nil, errNotAuthorized
		},
		ServerVersion: "SSH-2.0-OpenSSH_9.6p1 fake-droplet",
	}
	cfg.AddHostKey(h.signer)
	d := &sshd{ips: ips, lns: lns, fallback: fallback, conns: make(map[net.Conn]struct{})}
	sh := shell{hostname: hostname, guest: guest}
	for _, ln := range lns {
		go d.acceptLoop(ln, cfg, sh)
	}
	return d, nil
}

// addr is where a client reaches the server through ip, if anywhere.
func (d *sshd) addr(ip string) string {
	if d.fallback {
		return d.lns[0].Addr().String()
	}
	for _, ln := range d.lns {
		if host, _, _ := net.SplitHostPort(ln.Addr().String()); host == ip {
			return ln.Addr().String()
		}
	}
	return ""
}

func (d *sshd) acceptLoop(ln net.Listener, cfg *ssh.ServerConfig, sh shell) {
	for {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		if !d.track(nc) {
			_ = nc.Close()
			return
		}
		go func() {
			defer d.untrack(nc)
			serveSSHConn(nc, cfg, sh)
		}()
	}
}

func (d *sshd) track(nc net.Conn) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return false
	}
	d.conns[nc] = struct{}{}
	return true
}

func (d *sshd) untrack(nc net.Conn) {
	d.mu.Lock()
	delete(d.conns, nc)
	d.mu.Unlock()
	_ = nc.Close()
}

// close stops listening and cuts open sessions (waiting commands end with
// them), as a destroyed droplet would.
func (d *sshd) close() {
	d.mu.Lock()
	d.closed = true
	conns := d.conns
	d.conns = map[net.Conn]struct{}{}
	d.mu.Unlock()
	for _, ln := range d.lns {
		_ = ln.Close()
	}
	for c := range conns {
		_ = c.Close()
	}
}

func serveSSHConn(nc net.Conn, cfg *ssh.ServerConfig, sh shell) {
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second)) // bound the handshake
	sc, chans, reqs, err := ssh.NewServerConn(nc, cfg)
	if err != nil {
		return
	}
	defer sc.Close()
	_ = nc.SetDeadline(time.Time{})
	go ssh.DiscardRequests(reqs)
	for nch := range chans {
		if nch.ChannelType() != "session" {
			_ = nch.Reject(ssh.UnknownChannelType, "only session channels are supported")
			continue
		}
		ch, creqs, err := nch.Accept()
		if err != nil {
			continue
		}
		go serveSession(ch, creqs, sh)
	}
}

// serveSession answers one exec (or shell) request.
func serveSession(ch ssh.Channel, reqs <-chan *ssh.Request, sh shell) {
	defer ch.Close()
	for req := range reqs {
		switch req.Type {
		case "exec":
			var p struct{ Command string }
			if ssh.Unmarshal(req.Payload, &p) != nil {
				_ = req.Reply(false, nil)
				continue
			}
			_ = req.Reply(true, nil)
			exitSession(ch, sh.run(ch, p.Command, sessionEnded(reqs)))
			return
		case "shell":
			_ = req.Reply(true, nil)
			_, _ = ch.Write([]byte("fake droplet\r\n"))
			exitSession(ch, 0)
			return
		case "pty-req", "env", "window-change":
			_ = req.Reply(true, nil)
		default:
			_ = req.Reply(false, nil)
		}
	}
}

// sessionEnded drains the session's remaining requests and closes the
// returned channel once the session is gone: closed by the client, or cut
// with its connection.
func sessionEnded(reqs <-chan *ssh.Request) <-chan struct{} {
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		for req := range reqs {
			_ = req.Reply(false, nil)
		}
	}()
	return gone
}

func exitSession(ch ssh.Channel, status uint32) {
	_ = ch.CloseWrite()
	_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{status}))
}
