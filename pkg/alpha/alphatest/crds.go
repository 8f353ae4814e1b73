package alphatest

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// alphaCRDs is the alpha's pkg/crd.Setup as crder v0.2.0-rc0 renders it
// (schemas by wrangler v1.1.1 from its Go types, preserve-unknown-fields at
// the root only; short name "drop" on Droplet; a status subresource; no
// printer columns or categories), less the status and creationTimestamp.
//
//go:embed alpha-crds.json
var alphaCRDs []byte

// CRDs are the alpha's Droplet and Key CRDs as its controller installs them.
func CRDs() []*apiextensionsv1.CustomResourceDefinition {
	var crds []*apiextensionsv1.CustomResourceDefinition
	if err := json.Unmarshal(alphaCRDs, &crds); err != nil {
		panic(fmt.Sprintf("alphatest: embedded CRDs: %v", err)) // fixed input
	}
	return crds
}

// InstallCRDs installs the CRDs as the alpha's controller does at every
// start (crder's InstallUpdateCRDs): a plain create, or an update of the
// spec when they exist, by the alpha's field manager. Fields so written
// belong to that manager, so a later server-side apply of other CRDs over
// them conflicts, as in a cluster the alpha ran in. It returns once they
// are usable.
func InstallCRDs(ctx context.Context, cfg *rest.Config) error {
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	crdClient := client.ApiextensionsV1().CustomResourceDefinitions()
	crds := CRDs()
	for _, crd := range crds {
		existing, err := crdClient.Get(ctx, crd.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			_, err = crdClient.Create(ctx, crd, metav1.CreateOptions{FieldManager: alpha.FieldManager})
		case err == nil:
			existing.Spec = crd.Spec
			_, err = crdClient.Update(ctx, existing, metav1.UpdateOptions{FieldManager: alpha.FieldManager})
		}
		if err != nil {
			return fmt.Errorf("alphatest: install CRD %s: %w", crd.Name, err)
		}
	}
	return testenv.WaitCRDsUsable(ctx, cfg, crds...)
}
