package testenv

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
)

// newAPIServer configures kube-apiserver on loopback against our etcd, with RBAC on so
// tests can check least privileges, and only what a test needs enabled.
func newAPIServer(path, dir string, port int, etcdURL string, certs *pki) *process {
	return &process{
		name:    "kube-apiserver",
		path:    path,
		logPath: filepath.Join(dir, "kube-apiserver.log"),
		args: []string{
			"--bind-address=127.0.0.1",
			"--advertise-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(port),
			// Otherwise it writes self-signed certs to /var/run/kubernetes.
			"--cert-dir=" + filepath.Join(dir, "apiserver-certs"),
			"--etcd-servers=" + etcdURL,
			"--authorization-mode=Node,RBAC",
			"--client-ca-file=" + certs.caCertFile,
			"--tls-cert-file=" + certs.servingCertFile,
			"--tls-private-key-file=" + certs.servingKeyFile,
			"--service-account-key-file=" + certs.saPublicKeyFile,
			"--service-account-signing-key-file=" + certs.saPrivateKeyFile,
			"--service-account-issuer=https://kubernetes.default.svc",
			"--service-cluster-ip-range=10.0.0.0/24",
			"--allow-privileged=true",
			// Without kubelets and nodes nothing needs fair queuing; it only adds start-up work.
			"--enable-priority-and-fairness=false",
			// The "kubernetes" Service would get 127.0.0.1 endpoints, which validation rejects.
			"--endpoint-reconciler-type=none",
			// With the default 0 it never ends open watches on SIGTERM, and shutdown then
			// hangs until the request timeout; tests restart it and need it to exit promptly.
			"--shutdown-watch-termination-grace-period=1s",
			"--profiling=false",
			"--v=1",
		},
	}
}

// apiServerReady asks /readyz with the admin identity; 200 means etcd is reachable and
// every post-start hook (RBAC bootstrap roles, CRD informers, ...) has finished.
func apiServerReady(client *http.Client, host string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, host+"/readyz", nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			return fmt.Errorf("/readyz: %d %s", resp.StatusCode, body)
		}
		return nil
	}
}
