package image

import (
	"bytes"
	"encoding/pem"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// caBundle is Mozilla's root certificates as PEM, from the module go.sum pins,
// so every machine builds the same bundle. Roots that NSS trusts only with a
// constraint (a distrust-after date) are left out: a PEM bundle cannot carry
// the constraint, and without it they would be trusted beyond it.
func caBundle() ([]byte, error) {
	var buf bytes.Buffer
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			continue
		}
		if err := pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: root.Certificate}); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}
