package image_test

import (
	"crypto/x509"
	"encoding/pem"
	"testing"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image/imagetest"
)

// TestCABundleHoldsTheRootsDigitalOceansAPIChainsTo: api.digitalocean.com
// is served through Cloudflare, whose edge certificates are issued by Let's
// Encrypt (ISRG Root X1), Google Trust Services (GTS Root R1) and DigiCert
// (DigiCert Global Root G2), and Cloudflare may switch between them; the
// controller's calls fail unless the bundle holds all three.
func TestCABundleHoldsTheRootsDigitalOceansAPIChainsTo(t *testing.T) {
	img, err := imagetest.PlatformImage(quickIndex(t), "amd64")
	if err != nil {
		t.Fatal(err)
	}
	files, err := imagetest.Files(img)
	if err != nil {
		t.Fatal(err)
	}
	rest := files[image.CABundlePath].Data
	subjects := map[string]bool{}
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatalf("certificate %d does not parse: %v", len(subjects)+1, err)
		}
		if !cert.IsCA {
			t.Errorf("%s is not a CA", cert.Subject)
		}
		subjects[cert.Subject.CommonName] = true
	}
	if len(rest) != 0 {
		t.Errorf("%d bytes after the last certificate", len(rest))
	}
	if len(subjects) < 100 {
		t.Errorf("%d roots, want Mozilla's 100 and more", len(subjects))
	}
	for _, cn := range []string{"ISRG Root X1", "GTS Root R1", "DigiCert Global Root G2"} {
		if !subjects[cn] {
			t.Errorf("no %s among the roots", cn)
		}
	}
}
