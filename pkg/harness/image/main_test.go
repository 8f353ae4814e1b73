package image_test

import (
	"os"
	"testing"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/crds"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
)

// TestMain starts one control plane with HobbyFarm's CRDs and ours (as the
// chart installs them), unless this process is a sandbox launcher.
func TestMain(m *testing.M) {
	if os.Getenv(sandboxRootEnv) != "" {
		sandboxMain()
		return
	}
	ours, err := crds.Objects()
	if err != nil {
		panic(err)
	}
	testenv.Main(m, testenv.Options{CRDs: append(testenv.HobbyFarmCRDs(), ours...)})
}
