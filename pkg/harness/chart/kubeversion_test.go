package chart

import (
	"strings"
	"testing"
)

// TestKubeVersionRange: helm renders the chart for the Kubernetes versions
// Chart.yaml's kubeVersion admits, both ends and a provider's pre-release
// suffix included, and refuses those outside it.
func TestKubeVersionRange(t *testing.T) {
	for _, v := range []string{"1.19.0", "1.30.4-eks-a737599", "1.37.2"} {
		t.Run(v, func(t *testing.T) {
			render(t, release, "team-a", "--kube-version", v)
			render(t, release, "team-a", "--kube-version", v, "-f", testdata(t, "all-values.yaml"))
		})
	}
	for _, v := range []string{"1.18.20", "1.38.0"} {
		t.Run(v, func(t *testing.T) {
			if errOut := renderErr(t, "--kube-version", v); !strings.Contains(errOut, "chart requires kubeVersion") {
				t.Errorf("helm template --kube-version %s: %s", v, errOut)
			}
		})
	}
}
