package fake

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"strings"
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

// sshListener is one droplet's SSH server.
type sshListener struct {
	ip string
	ln net.Listener

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

var errNotAuthorized = errors.New("fake: public key not authorized")

// listen starts an SSH server on ip:0 that lets root in with exactly the
// authorized keys. If ip cannot be bound (e.g. only 127.0.0.1 exists, as on
// macOS) it falls back to 127.0.0.1, still loopback; SSHAddr tells the truth.
func (h *sshHost) listen(ip, hostname string, authorized map[string]bool) (*sshListener, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return nil, err
		}
	}
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(meta ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if meta.User() == "root" && authorized[string(key.Marshal())] {
				return &ssh.Permissions{}, nil
			}
			return nil, errNotAuthorized
		},
		ServerVersion: "SSH-2.0-OpenSSH_9.6p1 fake-droplet",
	}
	cfg.AddHostKey(h.signer)
	l := &sshListener{ip: ip, ln: ln, conns: make(map[net.Conn]struct{})}
	go l.acceptLoop(cfg, hostname)
	return l, nil
}

func (l *sshListener) addr() string { return l.ln.Addr().String() }

func (l *sshListener) acceptLoop(cfg *ssh.ServerConfig, hostname string) {
	for {
		nc, err := l.ln.Accept()
		if err != nil {
			return
		}
		if !l.track(nc) {
			_ = nc.Close()
			return
		}
		go func() {
			defer l.untrack(nc)
			serveSSHConn(nc, cfg, hostname)
		}()
	}
}

func (l *sshListener) track(nc net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.conns[nc] = struct{}{}
	return true
}

func (l *sshListener) untrack(nc net.Conn) {
	l.mu.Lock()
	delete(l.conns, nc)
	l.mu.Unlock()
	_ = nc.Close()
}

// close stops accepting and cuts open sessions, as a destroyed droplet would.
func (l *sshListener) close() {
	l.mu.Lock()
	l.closed = true
	conns := l.conns
	l.conns = map[net.Conn]struct{}{}
	l.mu.Unlock()
	_ = l.ln.Close()
	for c := range conns {
		_ = c.Close()
	}
}

func serveSSHConn(nc net.Conn, cfg *ssh.ServerConfig, hostname string) {
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
		go serveSession(ch, creqs, hostname)
	}
}

// serveSession answers one exec (or shell) and exits 0.
func serveSession(ch ssh.Channel, reqs <-chan *ssh.Request, hostname string) {
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
			_, _ = io.WriteString(ch, fakeCommandOutput(p.Command, hostname))
			exitSession(ch, 0)
			return
		case "shell":
			_ = req.Reply(true, nil)
			_, _ = io.WriteString(ch, "fake droplet\r\n")
			exitSession(ch, 0)
			return
		case "pty-req", "env", "window-change":
			_ = req.Reply(true, nil)
		default:
			_ = req.Reply(false, nil)
		}
	}
}

func exitSession(ch ssh.Channel, status uint32) {
	_ = ch.CloseWrite()
	_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{status}))
}

// fakeCommandOutput is just enough of a shell for a test to prove it logged
// into the right droplet.
func fakeCommandOutput(cmd, hostname string) string {
	cmd = strings.TrimSpace(cmd)
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
