// Package chart holds the tests of the Helm chart in chart/hf-provisioner-digitalocean:
// lint, rendering, the values schema, RBAC and security settings, applying two
// releases to a real kube-apiserver (pkg/harness/testenv), and upgrading a release of the
// alpha chart (testdata/alpha-chart) there. It has no non-test code.
//
// The tests run the helm binary: $HELM_BIN, else helm from PATH, else
// $(go env GOPATH)/bin/helm. Without one they fail, they do not skip.
package chart
