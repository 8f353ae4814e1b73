package sshprobe

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"golang.org/x/crypto/ssh"
	"golang.org/x/oauth2"
)

const token = "dop_v1_probe"

// A droplet of the fake, active, created with a fresh key.
func activeDroplet(t *testing.T, do *fakedo.Server) (*godo.Droplet, ssh.Signer) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	client, err := godo.New(oauth2.NewClient(ctx, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token})), godo.SetBaseURL(do.URL()))
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := client.Keys.Create(ctx, &godo.KeyCreateRequest{Name: "probe", PublicKey: string(ssh.MarshalAuthorizedKey(signer.PublicKey()))})
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := client.Droplets.Create(ctx, &godo.DropletCreateRequest{Name: "probe", Region: "nyc1", Size: "s-1vcpu-1gb",
		Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}, SSHKeys: []godo.DropletCreateSSHKey{{ID: key.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if d, _, err = client.Droplets.Get(ctx, d.ID); err == nil && d.Status == "active" {
			return d, signer
		}
		if time.Now().After(deadline) {
			t.Fatalf("droplet not active: %v", err)
		}
	}
}

func TestProbe(t *testing.T) {
	do := fakedo.New(fakedo.Options{SSH: true, BootDelay: 10 * time.Millisecond})
	if err := do.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(do.Close)
	do.AddAccount(token, fakedo.AccountOptions{})
	d, signer := activeDroplet(t, do)
	public, _ := d.PublicIPv4()
	private, _ := d.PrivateIPv4()
	at := func(ip string) string { return net.JoinHostPort(ip, strconv.Itoa(do.SSHPort())) }

	for _, c := range []struct {
		name      string
		guest     fakedo.Guest
		addr      string
		cloudInit bool
		want      string
		ok        bool
	}{
		{"logs in", fakedo.Guest{}, at(public), false, ReasonLoggedIn, true},
		{"logs in at the private address", fakedo.Guest{}, at(private), false, ReasonLoggedIn, true},
		{"sshd down", fakedo.Guest{SSHDown: true}, at(public), false, ReasonUnreachable, false},
		{"key refused", fakedo.Guest{RefuseKeys: true}, at(public), false, ReasonKeyRefused, false},
		{"cloud-init done", fakedo.Guest{}, at(public), true, ReasonLoggedIn, true},
		{"cloud-init running", fakedo.Guest{CloudInit: fakedo.CloudInitRunning}, at(public), true, ReasonCloudInitRunning, false},
		{"cloud-init failed", fakedo.Guest{CloudInit: fakedo.CloudInitError}, at(public), true, ReasonCloudInitFailed, false},
		{"cloud-init not asked", fakedo.Guest{CloudInit: fakedo.CloudInitError}, at(public), false, ReasonLoggedIn, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := do.SetGuest(token, d.ID, c.guest); err != nil {
				t.Fatal(err)
			}
			r := Probe(context.Background(), Target{Addr: c.addr, User: "root", Signer: signer, CloudInit: c.cloudInit}, 5*time.Second)
			if r.OK != c.ok || r.Reason != c.want || (r.Reason != ReasonCloudInitFailed && !strings.Contains(r.Message, c.addr)) {
				t.Errorf("got %+v, want ok=%v reason %s and a message naming %s", r, c.ok, c.want, c.addr)
			}
		})
	}
}
