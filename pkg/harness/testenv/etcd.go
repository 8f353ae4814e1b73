package testenv

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
)

// newEtcd configures a single-member etcd on loopback. etcd 3.4 has no --unsafe-no-fsync;
// speed comes from a data dir on tmpfs (see tmpfsRoot) and fast election timing.
func newEtcd(path, dir, dataDir string, clientPort, peerPort int) *process {
	client := "http://127.0.0.1:" + strconv.Itoa(clientPort)
	peer := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	return &process{
		name:    "etcd",
		path:    path,
		logPath: filepath.Join(dir, "etcd.log"),
		args: []string{
			"--name=default",
			"--data-dir=" + dataDir,
			"--listen-client-urls=" + client,
			"--advertise-client-urls=" + client,
			"--listen-peer-urls=" + peer,
			"--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=default=" + peer,
			"--initial-cluster-state=new",
			// A lone member elects itself after one election timeout: keep it short.
			"--heartbeat-interval=10",
			"--election-timeout=50",
			"--logger=zap",
			"--log-outputs=stderr",
			"--log-level=warn",
		},
	}
}

func etcdHealthy(url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/health", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"true"`) {
			return fmt.Errorf("etcd /health: %d %s", resp.StatusCode, body)
		}
		return nil
	}
}
