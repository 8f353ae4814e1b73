package alphatest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"

	"golang.org/x/crypto/ssh"
)

// keyPair is a key pair as the alpha made one for a VM's Secret.
type keyPair struct {
	// public is an authorized_keys line: "ssh-rsa AAAA…" and a newline,
	// no comment.
	public string
	// private is PKCS #1 PEM ("RSA PRIVATE KEY").
	private string
}

// rsaBits is the alpha's key size.
const rsaBits = 4096

func newKeyPair() (keyPair, error) {
	key, err := rsa.GenerateKey(rand.Reader, rsaBits)
	if err != nil {
		return keyPair{}, err
	}
	pub, err := ssh.NewPublicKey(&key.PublicKey)
	if err != nil {
		return keyPair{}, err
	}
	private := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	return keyPair{
		public:  string(ssh.MarshalAuthorizedKey(pub)),
		private: string(private),
	}, nil
}

// newKeyPairs makes n pairs at once: 4096-bit keys are slow to find.
func newKeyPairs(n int) ([]keyPair, error) {
	type result struct {
		pair keyPair
		err  error
	}
	results := make(chan result, n)
	for range n {
		go func() {
			p, err := newKeyPair()
			results <- result{p, err}
		}()
	}
	pairs := make([]keyPair, 0, n)
	var firstErr error
	for range n {
		r := <-results
		if r.err != nil && firstErr == nil {
			firstErr = r.err
		}
		pairs = append(pairs, r.pair)
	}
	return pairs, firstErr
}
