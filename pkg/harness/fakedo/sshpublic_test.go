package fakedo

import (
	"net"
	"strconv"
	"testing"
	"time"
)

// With SSHPublicOnly a droplet's sshd listens on its public IPv4 alone.
func TestSSHPublicOnly(t *testing.T) {
	srv := startFake(t, Options{SSH: true, SSHPublicOnly: true, BootDelay: 50 * time.Millisecond}, AccountOptions{})
	c := newClient(t, srv, testToken)
	req := basicCreate("public-only")
	req.PrivateNetworking = true
	d, _, err := c.Droplets.Create(ctxT(t), req)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if _, ok := srv.SSHAddr(testToken, d.ID); ok {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	got, _, err := c.Droplets.Get(ctxT(t), d.ID)
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(srv.SSHPort())
	pub, _ := got.PublicIPv4()
	private, _ := got.PrivateIPv4()
	if conn, err := net.DialTimeout("tcp", net.JoinHostPort(pub, port), time.Second); err != nil {
		t.Fatalf("public %s: %v", pub, err)
	} else {
		conn.Close()
	}
	if private == "" {
		t.Fatal("no private IPv4")
	}
	if conn, err := net.DialTimeout("tcp", net.JoinHostPort(private, port), time.Second); err == nil {
		conn.Close()
		t.Errorf("sshd listens on the private %s too", private)
	}
}
