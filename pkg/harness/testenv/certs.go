package testenv

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki holds the key material of one Env, both as PEM (for rest.Config and kubeconfigs)
// and as files (for the flags of the kube binaries).
type pki struct {
	caCert, caKey             []byte
	servingCert, servingKey   []byte
	adminCert, adminKey       []byte
	saPublicKey, saPrivateKey []byte

	caCertFile, caKeyFile             string
	servingCertFile, servingKeyFile   string
	saPublicKeyFile, saPrivateKeyFile string
}

// certValidity is long enough for any test run and short enough to not look like a real CA.
const certValidity = 24 * time.Hour

// newPKI generates a CA, an apiserver serving cert, an admin client cert and a
// service-account key pair, and writes the files the binaries need into dir.
// ECDSA keeps generation fast; the service-account key is RSA as kube setups usually use.
func newPKI(dir string) (*pki, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "hf-testenv-ca"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
	}
	caDER, err := signCert(caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}

	servingTmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default",
			"kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		// 10.0.0.1 is the "kubernetes" service IP of --service-cluster-ip-range=10.0.0.0/24.
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback, net.ParseIP("10.0.0.1")},
	}
	servingCert, servingKey, err := leafCert(servingTmpl, caCert, caKey)
	if err != nil {
		return nil, err
	}

	adminTmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	adminCert, adminKey, err := leafCert(adminTmpl, caCert, caKey)
	if err != nil {
		return nil, err
	}

	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	saPub, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return nil, err
	}

	caKeyPEM, err := keyPEM(caKey)
	if err != nil {
		return nil, err
	}
	p := &pki{
		caCert:      certPEM(caDER),
		caKey:       caKeyPEM,
		servingCert: servingCert,
		servingKey:  servingKey,
		adminCert:   adminCert,
		adminKey:    adminKey,
		saPublicKey: pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPub}),
		saPrivateKey: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY",
			Bytes: x509.MarshalPKCS1PrivateKey(saKey)}),

		caCertFile:       filepath.Join(dir, "ca.crt"),
		caKeyFile:        filepath.Join(dir, "ca.key"),
		servingCertFile:  filepath.Join(dir, "apiserver.crt"),
		servingKeyFile:   filepath.Join(dir, "apiserver.key"),
		saPublicKeyFile:  filepath.Join(dir, "sa.pub"),
		saPrivateKeyFile: filepath.Join(dir, "sa.key"),
	}
	for file, data := range map[string][]byte{
		p.caCertFile:       p.caCert,
		p.caKeyFile:        p.caKey,
		p.servingCertFile:  p.servingCert,
		p.servingKeyFile:   p.servingKey,
		p.saPublicKeyFile:  p.saPublicKey,
		p.saPrivateKeyFile: p.saPrivateKey,
	} {
		if err := os.WriteFile(file, data, 0o600); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// leafCert creates a fresh key and a certificate for it signed by the CA, both PEM encoded.
func leafCert(tmpl, ca *x509.Certificate, caKey crypto.Signer) (certPEMBytes, keyPEMBytes []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := signCert(tmpl, ca, key.Public(), caKey)
	if err != nil {
		return nil, nil, err
	}
	keyPEMBytes, err = keyPEM(key)
	if err != nil {
		return nil, nil, err
	}
	return certPEM(der), keyPEMBytes, nil
}

func signCert(tmpl, parent *x509.Certificate, pub crypto.PublicKey, signer crypto.Signer) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	// Backdated so that a slightly skewed clock does not make certs "not yet valid".
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(certValidity)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		return nil, fmt.Errorf("sign certificate %q: %w", tmpl.Subject.CommonName, err)
	}
	return der, nil
}

func certPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func keyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}
