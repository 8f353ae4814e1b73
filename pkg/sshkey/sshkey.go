// Package sshkey makes the key pairs handed to droplets and to Gargantua's shell.
package sshkey

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"strings"

	"golang.org/x/crypto/ssh"
)

// Secret data keys, as Gargantua's shell reads them.
const (
	PrivateKeyField = "private_key"
	PublicKeyField  = "public_key"
)

// Pair is an OpenSSH private key and its authorized_keys line.
type Pair struct {
	PrivateKeyPEM []byte
	PublicKey     string
}

// NewED25519 generates a key pair. ed25519 is cheap to make and every
// current DigitalOcean image accepts it.
func NewED25519(comment string) (*Pair, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	block, err := ssh.MarshalPrivateKey(priv, comment)
	if err != nil {
		return nil, err
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil, err
	}
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshPub)))
	if comment != "" {
		line += " " + comment
	}
	return &Pair{PrivateKeyPEM: pem.EncodeToMemory(block), PublicKey: line}, nil
}

// Fingerprint is DigitalOcean's MD5 fingerprint of an authorized_keys line.
func Fingerprint(authorizedKey string) (string, error) {
	pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(authorizedKey))
	if err != nil {
		return "", err
	}
	return ssh.FingerprintLegacyMD5(pub), nil
}
