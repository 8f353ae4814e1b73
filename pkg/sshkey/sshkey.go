// Package sshkey makes the key pairs handed to droplets and to Gargantua's shell.
package sshkey

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/pem"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"
)

// Secret data keys, as Gargantua's shell reads them.
const (
	PrivateKeyField = "private_key"
	PublicKeyField  = "public_key"
)

// Type is a kind of key pair, as the ssh_key_type config key names it.
type Type string

const (
	// ED25519 is the default: cheap to make, and every current DigitalOcean image accepts it.
	ED25519 Type = "ed25519"
	// RSA is for images whose sshd predates ed25519 (OpenSSH before 6.5).
	RSA Type = "rsa"
)

// Types are the supported types, the default first.
var Types = []Type{ED25519, RSA}

// RSABits is the size of RSA keys.
const RSABits = 4096

// Pair is an OpenSSH private key and its authorized_keys line.
type Pair struct {
	PrivateKeyPEM []byte
	PublicKey     string
}

// New generates a key pair of type t; the private key is in OpenSSH format,
// which ssh.ParsePrivateKey (Gargantua's shell) and OpenSSH 6.5 and later read.
// An RSA key takes a second or more of CPU.
func New(t Type, comment string) (*Pair, error) {
	var (
		priv crypto.PrivateKey
		pub  crypto.PublicKey
	)
	switch t {
	case ED25519:
		edPub, edPriv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		priv, pub = edPriv, edPub
	case RSA:
		rsaPriv, err := rsa.GenerateKey(rand.Reader, RSABits)
		if err != nil {
			return nil, err
		}
		priv, pub = rsaPriv, &rsaPriv.PublicKey
	default:
		return nil, fmt.Errorf("unknown SSH key type %q", t)
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

// NewED25519 generates an ed25519 key pair.
func NewED25519(comment string) (*Pair, error) { return New(ED25519, comment) }

// Fingerprint is DigitalOcean's MD5 fingerprint of an authorized_keys line.
func Fingerprint(authorizedKey string) (string, error) {
	pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(authorizedKey))
	if err != nil {
		return "", err
	}
	return ssh.FingerprintLegacyMD5(pub), nil
}
