package sshkey

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"testing"

	"golang.org/x/crypto/ssh"
)

// Every type's private key must parse as Gargantua's shell parses it, sign,
// and match the public key that goes to DigitalOcean.
func TestNewKeysParseAndMatch(t *testing.T) {
	for _, c := range []struct {
		typ     Type
		algo    string
		rsaBits int
	}{
		{ED25519, ssh.KeyAlgoED25519, 0},
		{RSA, ssh.KeyAlgoRSA, RSABits},
	} {
		t.Run(string(c.typ), func(t *testing.T) {
			pair, err := New(c.typ, "hobbyfarm-vm-1")
			if err != nil {
				t.Fatal(err)
			}
			signer, err := ssh.ParsePrivateKey(pair.PrivateKeyPEM)
			if err != nil {
				t.Fatalf("ssh.ParsePrivateKey: %v", err)
			}
			pub, comment, _, rest, err := ssh.ParseAuthorizedKey([]byte(pair.PublicKey))
			if err != nil || len(rest) != 0 {
				t.Fatalf("public key %q is not one authorized_keys line: %v", pair.PublicKey, err)
			}
			if pub.Type() != c.algo || comment != "hobbyfarm-vm-1" {
				t.Errorf("public key type %s comment %q, want %s and the comment", pub.Type(), comment, c.algo)
			}
			if !bytes.Equal(signer.PublicKey().Marshal(), pub.Marshal()) {
				t.Error("the private key does not belong to the public key")
			}
			data := []byte("challenge")
			sig, err := signer.Sign(rand.Reader, data)
			if err != nil {
				t.Fatal(err)
			}
			if err := pub.Verify(data, sig); err != nil {
				t.Errorf("signature does not verify: %v", err)
			}
			if c.rsaBits != 0 {
				raw, err := ssh.ParseRawPrivateKey(pair.PrivateKeyPEM)
				if err != nil {
					t.Fatal(err)
				}
				if k, ok := raw.(*rsa.PrivateKey); !ok || k.N.BitLen() != c.rsaBits {
					t.Errorf("RSA key %T is not %d bits", raw, c.rsaBits)
				}
			}
			if fp, err := Fingerprint(pair.PublicKey); err != nil || fp != ssh.FingerprintLegacyMD5(pub) {
				t.Errorf("Fingerprint = %q, %v", fp, err)
			}
		})
	}
}

func TestNewRejectsUnknownType(t *testing.T) {
	if _, err := New("dsa", ""); err == nil {
		t.Error("dsa accepted")
	}
}

func TestTwoKeysDiffer(t *testing.T) {
	a, _ := NewED25519("")
	b, _ := NewED25519("")
	if a == nil || b == nil || a.PublicKey == b.PublicKey {
		t.Error("two generated keys are the same")
	}
}
