package fakedo

import (
	"errors"
	"net"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	"golang.org/x/crypto/ssh"
)

// guestWorld is an SSH-enabled fake with one authorized key.
type guestWorld struct {
	t      *testing.T
	srv    *Server
	c      *godo.Client
	signer ssh.Signer
	key    godo.Key
}

// newGuestWorld skips where droplet addresses cannot be bound: off Linux
// every droplet falls back to a port of its own on 127.0.0.1.
func newGuestWorld(t *testing.T, opts Options) *guestWorld {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("needs all of 127.0.0.0/8 on lo")
	}
	opts.SSH = true
	if opts.BootDelay == 0 {
		opts.BootDelay = NoDelay
	}
	srv := startFake(t, opts, AccountOptions{})
	c := newClient(t, srv, testToken)
	signer, line := newTestKey(t)
	k, _, err := c.Keys.Create(ctxT(t), &godo.KeyCreateRequest{Name: "vm", PublicKey: line})
	if err != nil {
		t.Fatal(err)
	}
	return &guestWorld{t: t, srv: srv, c: c, signer: signer, key: *k}
}

// create makes active droplets with the world's key and returns them as
// the API shows them.
func (w *guestWorld) create(names ...string) []godo.Droplet {
	w.t.Helper()
	ctx := ctxT(w.t)
	req := &godo.DropletMultiCreateRequest{Names: names, Region: "nyc3", Size: "s-1vcpu-1gb",
		Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}, Tags: []string{"hobbyfarm"},
		SSHKeys: []godo.DropletCreateSSHKey{{Fingerprint: w.key.Fingerprint}}}
	created, _, err := w.c.Droplets.CreateMultiple(ctx, req)
	if err != nil {
		w.t.Fatal(err)
	}
	out := make([]godo.Droplet, len(created))
	for i, d := range created {
		got, _, err := w.c.Droplets.Get(ctx, d.ID)
		if err != nil || got.Status != "active" {
			w.t.Fatalf("droplet %s: %+v %v", d.Name, got, err)
		}
		out[i] = *got
	}
	return out
}

// addrs are the droplet's public and private addresses at the SSH port.
func (w *guestWorld) addrs(d godo.Droplet) (public, private string) {
	pub, _ := d.PublicIPv4()
	priv, _ := d.PrivateIPv4()
	port := strconv.Itoa(w.srv.SSHPort())
	return net.JoinHostPort(pub, port), net.JoinHostPort(priv, port)
}

// exec runs cmd as root with the world's key and returns its output and
// exit status.
func (w *guestWorld) exec(addr, cmd string) (string, int, error) {
	client, err := w.dial(addr)
	if err != nil {
		return "", 0, err
	}
	defer client.Close()
	return sessionExec(client, cmd)
}

func (w *guestWorld) dial(addr string) (*ssh.Client, error) {
	return ssh.Dial("tcp", addr, &ssh.ClientConfig{
		User: "root", Auth: []ssh.AuthMethod{ssh.PublicKeys(w.signer)},
		HostKeyCallback: ssh.FixedHostKey(w.srv.HostPublicKey()), Timeout: 5 * time.Second,
	})
}

func sessionExec(client *ssh.Client, cmd string) (string, int, error) {
	sess, err := client.NewSession()
	if err != nil {
		return "", 0, err
	}
	defer sess.Close()
	out, err := sess.Output(cmd)
	var exit *ssh.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitStatus(), nil
	}
	return string(out), 0, err
}

func (w *guestWorld) setGuest(d godo.Droplet, g Guest) {
	w.t.Helper()
	if err := w.srv.SetGuest(testToken, d.ID, g); err != nil {
		w.t.Fatal(err)
	}
}

func refused(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		c.Close()
	}
	return err != nil
}

func TestSSHSharedPortOnPublicAndPrivateAddresses(t *testing.T) {
	w := newGuestWorld(t, Options{})
	ds := w.create("one", "two")
	port := w.srv.SSHPort()
	if port == 0 {
		t.Fatal("SSHPort = 0 with SSH on")
	}
	// Both droplets listen at once, on different addresses, at one port.
	var clients []*ssh.Client
	for _, d := range ds {
		pub, priv := w.addrs(d)
		if addr, _ := w.srv.SSHAddr(testToken, d.ID); addr != pub {
			t.Fatalf("SSHAddr = %q, want %q", addr, pub)
		}
		if !strings.HasPrefix(priv, "127.10.") {
			t.Fatalf("private address %s is not from 127.10.0.0", priv)
		}
		for _, addr := range []string{pub, priv} {
			client, err := w.dial(addr)
			if err != nil {
				t.Fatalf("%s at %s: %v", d.Name, addr, err)
			}
			defer client.Close()
			clients = append(clients, client)
		}
	}
	for i, client := range clients {
		if out, _, err := sessionExec(client, "hostname"); err != nil || out != ds[i/2].Name+"\n" {
			t.Fatalf("client %d: hostname %q %v, want %s", i, out, err, ds[i/2].Name)
		}
	}

	// Deleting a droplet closes both of its addresses, not its neighbour's.
	if _, err := w.c.Droplets.Delete(ctxT(t), ds[0].ID); err != nil {
		t.Fatal(err)
	}
	pub, priv := w.addrs(ds[0])
	if !refused(pub) || !refused(priv) {
		t.Fatal("a deleted droplet still listens")
	}
	if _, _, err := sessionExec(clients[0], "hostname"); err == nil {
		t.Fatal("a deleted droplet's session survived")
	}
	if pub, _ := w.addrs(ds[1]); refused(pub) {
		t.Fatal("deleting one droplet closed the other")
	}
}

func TestSSHPortOption(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	w := newGuestWorld(t, Options{SSHPort: port})
	if w.srv.SSHPort() != port {
		t.Fatalf("SSHPort = %d, want %d", w.srv.SSHPort(), port)
	}
	d := w.create("fixed")[0]
	_, priv := w.addrs(d)
	if out, _, err := w.exec(priv, "hostname"); err != nil || out != "fixed\n" {
		t.Fatalf("private %s: %q %v", priv, out, err)
	}
}

func TestSSHPortsOfTwoServersDiffer(t *testing.T) {
	a, b := New(Options{SSH: true}), New(Options{SSH: true})
	defer a.Close()
	defer b.Close()
	if a.SSHPort() == 0 || a.SSHPort() == b.SSHPort() {
		t.Fatalf("ports %d and %d: two live fakes, whose droplets share addresses, need different ports", a.SSHPort(), b.SSHPort())
	}
	if New(Options{}).SSHPort() != 0 {
		t.Fatal("SSHPort without SSH")
	}
}

func TestSSHDownUntilSetGuest(t *testing.T) {
	w := newGuestWorld(t, Options{Guest: Guest{SSHDown: true}})
	ds := w.create("booting", "other")
	d := ds[0]
	pub, priv := w.addrs(d)
	if _, ok := w.srv.SSHAddr(testToken, d.ID); ok || !refused(pub) || !refused(priv) {
		t.Fatal("sshd listens although the guest keeps it down")
	}
	w.setGuest(d, Guest{})
	if out, _, err := w.exec(pub, "hostname"); err != nil || out != "booting\n" {
		t.Fatalf("after SetGuest: %q %v", out, err)
	}
	client, err := w.dial(priv)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	w.setGuest(d, Guest{SSHDown: true})
	if !refused(pub) || !refused(priv) {
		t.Fatal("sshd still listens after SSHDown")
	}
	if _, _, err := sessionExec(client, "hostname"); err == nil {
		t.Fatal("a session survived sshd going down")
	}

	// New droplets take the default guest in force when they are created.
	if err := w.srv.SetDefaultGuest(Guest{}); err != nil {
		t.Fatal(err)
	}
	up := w.create("up")[0]
	if pub, _ := w.addrs(up); refused(pub) {
		t.Fatal("SetDefaultGuest did not apply to a new droplet")
	}
	if pub, _ := w.addrs(ds[1]); !refused(pub) {
		t.Fatal("SetDefaultGuest changed an existing droplet")
	}
}

func TestSSHRefuseKeys(t *testing.T) {
	w := newGuestWorld(t, Options{})
	d := w.create("keyless")[0]
	pub, _ := w.addrs(d)
	w.setGuest(d, Guest{RefuseKeys: true})
	if _, _, err := w.exec(pub, "hostname"); err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Fatalf("the right key must be refused, got %v", err)
	}
	w.setGuest(d, Guest{})
	if out, _, err := w.exec(pub, "hostname"); err != nil || out != "keyless\n" {
		t.Fatalf("after RefuseKeys is cleared: %q %v", out, err)
	}
}

func TestSSHDelay(t *testing.T) {
	const delay = 300 * time.Millisecond
	w := newGuestWorld(t, Options{Guest: Guest{SSHDelay: delay}})
	start := time.Now()
	d := w.create("slow")[0]
	pub, _ := w.addrs(d)
	if !refused(pub) {
		t.Fatal("sshd listens before SSHDelay")
	}
	// Only dials, no API reads: the droplet's timer must bring sshd up.
	for refused(pub) {
		if time.Since(start) > 5*time.Second {
			t.Fatal("sshd never came up")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if took := time.Since(start); took < delay {
		t.Fatalf("sshd up after %v, before SSHDelay %v", took, delay)
	}
}

func TestCloudInitStatus(t *testing.T) {
	w := newGuestWorld(t, Options{Guest: Guest{CloudInit: CloudInitRunning}})
	d := w.create("ci")[0]
	pub, priv := w.addrs(d)
	for _, tc := range []struct {
		result CloudInitResult
		cmd    string
		out    string
		status int
	}{
		{CloudInitRunning, "cloud-init status", "status: running\n", 0},
		{CloudInitDone, "cloud-init status", "status: done\n", 0},
		{"", "cloud-init status", "status: done\n", 0},
		{CloudInitError, "cloud-init status", "status: error\n", 1},
		{CloudInitError, "cloud-init status --wait", "status: error\n", 1},
		{CloudInitDone, "cloud-init status -w", "status: done\n", 0},
	} {
		w.setGuest(d, Guest{CloudInit: tc.result})
		for _, addr := range []string{pub, priv} {
			out, status, err := w.exec(addr, tc.cmd)
			if err != nil || out != tc.out || status != tc.status {
				t.Errorf("%q with %q at %s: %q exit %d %v; want %q exit %d", tc.cmd, tc.result, addr, out, status, err, tc.out, tc.status)
			}
		}
	}
	out, status, err := w.exec(pub, "cloud-init status --long")
	if err != nil || status != 0 || !strings.HasPrefix(out, "status: done\nextended_status: done\n") {
		t.Errorf("--long: %q exit %d %v", out, status, err)
	}
	if out, _, _ := w.exec(pub, "cloud-init status --bogus"); out != "fake droplet\n" {
		t.Errorf("an unknown flag is an unknown command: %q", out)
	}
	if err := w.srv.SetGuest(testToken, d.ID, Guest{CloudInit: "degraded"}); err == nil {
		t.Error("an unknown result must be rejected")
	}
	if err := w.srv.SetGuest(testToken, 1, Guest{}); err != ErrUnknownDroplet {
		t.Errorf("unknown droplet: %v", err)
	}
}

func TestCloudInitWaitReturnsWhenTheStateChanges(t *testing.T) {
	w := newGuestWorld(t, Options{Guest: Guest{CloudInit: CloudInitRunning}})
	d := w.create("waiting")[0]
	pub, _ := w.addrs(d)
	type result struct {
		out    string
		status int
		err    error
		at     time.Time
	}
	done := make(chan result, 1)
	go func() {
		out, status, err := w.exec(pub, "cloud-init status --wait")
		done <- result{out, status, err, time.Now()}
	}()
	select {
	case r := <-done:
		t.Fatalf("--wait returned while cloud-init runs: %+v", r)
	case <-time.After(1500 * time.Millisecond): // long enough for a dot
	}
	changed := time.Now()
	w.setGuest(d, Guest{CloudInit: CloudInitError})
	r := <-done
	if r.err != nil || r.status != 1 || !regexp.MustCompile(`^\.+\nstatus: error\n$`).MatchString(r.out) {
		t.Fatalf("--wait: %q exit %d %v; want dots, then status: error, exit 1", r.out, r.status, r.err)
	}
	if lag := r.at.Sub(changed); lag > 500*time.Millisecond {
		t.Fatalf("--wait noticed the change after %v", lag)
	}
}

func TestCloudInitDelay(t *testing.T) {
	const delay = 400 * time.Millisecond
	w := newGuestWorld(t, Options{Guest: Guest{CloudInitDelay: delay}})
	d := w.create("late")[0]
	pub, _ := w.addrs(d)
	if out, _, err := w.exec(pub, "cloud-init status"); err != nil || out != "status: running\n" {
		t.Fatalf("during CloudInitDelay: %q %v", out, err)
	}
	// The delay ends before the first dot is due, so --wait must wake on
	// its own rather than at the next dot.
	out, status, err := w.exec(pub, "cloud-init status --wait")
	if err != nil || out != "status: done\n" || status != 0 {
		t.Fatalf("--wait across CloudInitDelay: %q exit %d %v", out, status, err)
	}
}

func TestDeleteCutsWaitingSession(t *testing.T) {
	w := newGuestWorld(t, Options{Guest: Guest{CloudInit: CloudInitRunning}})
	d := w.create("doomed")[0]
	_, priv := w.addrs(d)
	done := make(chan error, 1)
	go func() {
		_, _, err := w.exec(priv, "cloud-init status --wait")
		done <- err
	}()
	time.Sleep(200 * time.Millisecond) // let the command start
	if _, err := w.c.Droplets.Delete(ctxT(t), d.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the session ended cleanly although the droplet was destroyed")
		}
	case <-time.After(3 * time.Second):
		t.Fatal("destroying the droplet did not cut the waiting session")
	}
}

func TestNoSSHAfterClose(t *testing.T) {
	w := newGuestWorld(t, Options{Guest: Guest{SSHDelay: 200 * time.Millisecond}})
	d := w.create("never")[0]
	pub, _ := w.addrs(d)
	w.srv.Close()
	time.Sleep(400 * time.Millisecond)
	if !refused(pub) {
		t.Fatal("sshd came up after Close")
	}
}
