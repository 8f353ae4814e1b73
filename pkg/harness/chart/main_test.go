package chart

import (
	"os"
	"testing"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/crds"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
)

// TestMain starts one control plane for the integration tests, with HobbyFarm's
// CRDs and ours (as the chart's crds/ folder would install them). Started by
// podCommand, the test binary only sets its hostname and execs the controller.
func TestMain(m *testing.M) {
	if hostname := os.Getenv(podHostnameEnv); hostname != "" {
		execAsPod(hostname)
	}
	ours, err := crds.Objects()
	if err != nil {
		panic(err)
	}
	testenv.Main(m, testenv.Options{CRDs: append(testenv.HobbyFarmCRDs(), ours...)})
}
