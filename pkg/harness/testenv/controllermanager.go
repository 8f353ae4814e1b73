package testenv

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
)

// controllers are the parts of kube-controller-manager tests rely on: the garbage
// collector (owner references delete HobbyFarm objects in real clusters), namespace
// deletion, and default ServiceAccounts with their tokens.
var controllers = []string{
	"garbage-collector-controller",
	"namespace-controller",
	"serviceaccount-controller",
	"serviceaccount-token-controller",
}

func newControllerManager(path, dir string, port int, kubeconfig string, certs *pki) *process {
	return &process{
		name:    "kube-controller-manager",
		path:    path,
		logPath: filepath.Join(dir, "kube-controller-manager.log"),
		args: []string{
			"--kubeconfig=" + kubeconfig,
			// No --authentication/authorization-kubeconfig: only /healthz (always allowed) is
			// used, and delegated authn would retry forever for the requestheader CA we lack.
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(port),
			"--cert-dir=" + filepath.Join(dir, "controller-manager-certs"),
			"--controllers=" + strings.Join(controllers, ","),
			"--leader-elect=false",
			"--service-account-private-key-file=" + certs.saPrivateKeyFile,
			"--root-ca-file=" + certs.caCertFile,
			"--use-service-account-credentials=false",
			"--profiling=false",
			"--v=1",
		},
	}
}

// controllerManagerHealthy polls /healthz, which is always allowed without credentials;
// its serving cert is self-signed, so it is not verified.
func controllerManagerHealthy(port int) func(context.Context) error {
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback health probe
	}}
	url := "https://127.0.0.1:" + strconv.Itoa(port) + "/healthz"
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("controller-manager /healthz: %d", resp.StatusCode)
		}
		return nil
	}
}
