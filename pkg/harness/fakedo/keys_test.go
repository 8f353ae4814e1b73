package fakedo

import (
	"crypto/ed25519"
	"crypto/rand"
	"net/http"
	"testing"

	"github.com/digitalocean/godo"
	"golang.org/x/crypto/ssh"
)

// newTestKey returns a signer and its authorized_keys line.
func newTestKey(t *testing.T) (ssh.Signer, string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return signer, string(ssh.MarshalAuthorizedKey(signer.PublicKey()))
}

func TestKeys(t *testing.T) {
	srv := startFake(t, Options{}, AccountOptions{})
	c := newClient(t, srv, testToken)
	ctx := ctxT(t)
	signer, line := newTestKey(t)

	k, resp, err := c.Keys.Create(ctx, &godo.KeyCreateRequest{Name: "hf", PublicKey: line})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if resp.StatusCode != http.StatusCreated || k.ID == 0 || k.Name != "hf" {
		t.Fatalf("created %+v (status %d)", k, resp.StatusCode)
	}
	if want := ssh.FingerprintLegacyMD5(signer.PublicKey()); k.Fingerprint != want {
		t.Fatalf("fingerprint %q, want %q", k.Fingerprint, want)
	}

	byFP, _, err := c.Keys.GetByFingerprint(ctx, k.Fingerprint)
	if err != nil || byFP.ID != k.ID {
		t.Fatalf("GetByFingerprint: %+v %v", byFP, err)
	}
	byID, _, err := c.Keys.GetByID(ctx, k.ID)
	if err != nil || byID.Fingerprint != k.Fingerprint {
		t.Fatalf("GetByID: %+v %v", byID, err)
	}

	_, _, err = c.Keys.Create(ctx, &godo.KeyCreateRequest{Name: "again", PublicKey: line})
	if er := apiErr(t, err, http.StatusUnprocessableEntity); er.Message != msgKeyInUse {
		t.Fatalf("duplicate message = %q", er.Message)
	}
	_, _, err = c.Keys.Create(ctx, &godo.KeyCreateRequest{Name: "junk", PublicKey: "ssh-rsa notbase64!"})
	wantStatus(t, err, http.StatusUnprocessableEntity)

	keys, _, err := c.Keys.List(ctx, nil)
	if err != nil || len(keys) != 1 || len(srv.Keys(testToken)) != 1 {
		t.Fatalf("List: %+v %v", keys, err)
	}

	// A droplet can reference the key by id or fingerprint.
	req := basicCreate("keyed")
	req.SSHKeys = []godo.DropletCreateSSHKey{{ID: k.ID}, {Fingerprint: k.Fingerprint}}
	if _, _, err := c.Droplets.Create(ctx, req); err != nil {
		t.Fatalf("create with keys: %v", err)
	}

	if _, err := c.Keys.DeleteByFingerprint(ctx, k.Fingerprint); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	_, _, err = c.Keys.GetByID(ctx, k.ID)
	wantStatus(t, err, http.StatusNotFound)
	_, err = c.Keys.DeleteByID(ctx, k.ID)
	wantStatus(t, err, http.StatusNotFound)
}
