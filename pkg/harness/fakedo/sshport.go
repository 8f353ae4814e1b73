package fakedo

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"sync"
	"syscall"
)

// sshPorts is the one port all droplet SSH servers of a Server share.
//
// With Options.SSHPort 0 the port is picked at New by listening on
// 127.0.0.1:0, and that listener is kept until Close (closing whatever
// connects to it). Every fake picks its port that way, so two live fakes on
// one machine never share a port even though their droplets get the same
// addresses (parallel test binaries, or several fakes in one test), and no
// wildcard listener elsewhere can take it. Should a droplet address still be
// taken at the port, by some other program, the port is picked again, but
// only while no droplet has listened on it: a port once served never
// changes.
type sshPorts struct {
	mu        sync.Mutex
	port      int
	auto      bool
	reserve   net.Listener // 127.0.0.1:port while auto
	committed bool         // a droplet has listened on port
}

// pickAttempts bounds how often listen picks a new port after collisions.
const pickAttempts = 3

func newSSHPorts(port int) (*sshPorts, error) {
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("SSH port %d out of range", port)
	}
	p := &sshPorts{port: port, auto: port == 0}
	if p.auto {
		if err := p.pick(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// pick replaces the reserved port with a fresh one. Caller holds mu (or
// owns p).
func (p *sshPorts) pick() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	p.release()
	p.reserve, p.port = ln, ln.Addr().(*net.TCPAddr).Port
	go refuseAll(ln)
	return nil
}

// refuseAll closes what connects to the reservation, so a stray client
// fails at once instead of hanging in the backlog.
func refuseAll(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		_ = c.Close()
	}
}

// release closes the reservation. Caller holds mu.
func (p *sshPorts) release() {
	if p.reserve != nil {
		_ = p.reserve.Close()
		p.reserve = nil
	}
}

func (p *sshPorts) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.release()
}

func (p *sshPorts) current() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.port
}

// listen binds every ip at the shared port. Where a 127.x address other
// than 127.0.0.1 cannot be bound (macOS has only 127.0.0.1 unless aliases
// are added) it falls back to a single listener on 127.0.0.1 at a port of
// its own, still loopback, which SSHAddr reports. On Linux all of
// 127.0.0.0/8 is local, so it never falls back there: a failure is an
// error and the droplet's sshd stays down until the next refresh.
func (p *sshPorts) listen(ips []string) (lns []net.Listener, fallback bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for attempt := 1; ; attempt++ {
		lns, err = listenAll(ips, p.port)
		switch {
		case err == nil:
			p.committed = true
			return lns, false, nil
		case errors.Is(err, syscall.EADDRINUSE) && p.auto && !p.committed && attempt < pickAttempts:
			if err := p.pick(); err != nil {
				return nil, false, err
			}
		case runtime.GOOS != "linux":
			ln, ferr := net.Listen("tcp", "127.0.0.1:0")
			if ferr != nil {
				return nil, false, errors.Join(err, ferr)
			}
			return []net.Listener{ln}, true, nil
		default:
			return nil, false, err
		}
	}
}

// listenAll listens on every ip at port, or on none.
func listenAll(ips []string, port int) ([]net.Listener, error) {
	lns := make([]net.Listener, 0, len(ips))
	for _, ip := range ips {
		ln, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
		if err != nil {
			for _, l := range lns {
				_ = l.Close()
			}
			return nil, err
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// SSHPort is the port every droplet's SSH server listens on, on the
// droplet's public and private IPv4 alike: Options.SSHPort, or the free
// port picked at New. It is 0 when Options.SSH is off. Where the droplet
// addresses cannot be bound (see SSHAddr) droplets fall back to ports of
// their own.
func (s *Server) SSHPort() int {
	if s.ports == nil {
		return 0
	}
	return s.ports.current()
}
