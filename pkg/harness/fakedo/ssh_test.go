package fakedo

import (
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	"golang.org/x/crypto/ssh"
)

func sshRun(addr, user string, signer ssh.Signer, hostKey ssh.PublicKey, cmd string) (string, error) {
	cfg := &ssh.ClientConfig{
		User:            user,
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(hostKey),
		Timeout:         5 * time.Second,
	}
	client, err := ssh.Dial("tcp", addr, cfg)
	if err != nil {
		return "", err
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		return "", err
	}
	defer sess.Close()
	out, err := sess.Output(cmd)
	return string(out), err
}

func TestSSHLogin(t *testing.T) {
	srv := startFake(t, Options{SSH: true, BootDelay: 50 * time.Millisecond}, AccountOptions{})
	c := newClient(t, srv, testToken)
	ctx := ctxT(t)
	good, goodLine := newTestKey(t)
	other, otherLine := newTestKey(t)
	k, _, err := c.Keys.Create(ctx, &godo.KeyCreateRequest{Name: "good", PublicKey: goodLine})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Keys.Create(ctx, &godo.KeyCreateRequest{Name: "other", PublicKey: otherLine}); err != nil {
		t.Fatal(err)
	}
	req := basicCreate("ssh-box")
	req.SSHKeys = []godo.DropletCreateSSHKey{{Fingerprint: k.Fingerprint}}
	d, _, err := c.Droplets.Create(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := srv.SSHAddr(testToken, d.ID); ok {
		t.Fatal("SSH must not run while the droplet is new")
	}

	// The boot timer starts SSH without any API read.
	var addr string
	deadline := time.Now().Add(3 * time.Second)
	for addr == "" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		addr, _ = srv.SSHAddr(testToken, d.ID)
	}
	if addr == "" {
		t.Fatal("no SSH server after boot")
	}
	got, _, err := c.Droplets.Get(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := got.PublicIPv4()
	if want := net.JoinHostPort(pub, strconv.Itoa(srv.SSHPort())); addr != want && runtime.GOOS == "linux" {
		t.Fatalf("SSH at %s, want the droplet IP at the shared port, %s", addr, want)
	}

	hk := srv.HostPublicKey()
	if out, err := sshRun(addr, "root", good, hk, "hostname"); err != nil || out != "ssh-box\n" {
		t.Fatalf("hostname: %q %v", out, err)
	}
	if out, err := sshRun(addr, "root", good, hk, "echo hello world"); err != nil || out != "hello world\n" {
		t.Fatalf("echo: %q %v", out, err)
	}
	if out, err := sshRun(addr, "root", good, hk, "uptime"); err != nil || out != "fake droplet\n" {
		t.Fatalf("other command: %q %v", out, err)
	}
	if _, err := sshRun(addr, "root", other, hk, "hostname"); err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Fatalf("another account key must be refused, got %v", err)
	}
	if out, err := sshRun(addr, "ubuntu", good, hk, "hostname"); err != nil || out != "ssh-box\n" {
		t.Fatalf("any user with an authorized key may log in, as the VM's ssh_username: %q %v", out, err)
	}

	if _, err := c.Droplets.Delete(ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Fatal("SSH listener still open after delete")
	}
}
