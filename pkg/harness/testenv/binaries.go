package testenv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const modulePath = "github.com/hobbyfarm/hf-provisioner-digitalocean"

// binaries are the absolute paths of the programs an Env runs.
type binaries struct {
	etcd, apiserver, controllerManager string
}

func findBinaries(opts Options) (binaries, error) {
	var b binaries
	etcd, err := findEtcd(opts.EtcdBin)
	if err != nil {
		return b, err
	}
	dir, err := kubeBinDir(opts.KubeBinDir)
	if err != nil {
		return b, err
	}
	b = binaries{
		etcd:              etcd,
		apiserver:         filepath.Join(dir, "kube-apiserver"),
		controllerManager: filepath.Join(dir, "kube-controller-manager"),
	}
	for _, p := range []string{b.apiserver, b.controllerManager} {
		if _, err := os.Stat(p); err != nil {
			return b, fmt.Errorf("kube binary missing (run scripts/kube-binaries): %w", err)
		}
	}
	return b, nil
}

// findEtcd prefers an explicit path, then ETCD_BIN, then PATH.
func findEtcd(explicit string) (string, error) {
	for _, p := range []string{explicit, os.Getenv("ETCD_BIN")} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("etcd not found at %s: run scripts/prereqs (apt-get install etcd-server)", p)
		}
		return p, nil
	}
	p, err := exec.LookPath("etcd")
	if err != nil {
		return "", errors.New("etcd not found: run scripts/prereqs (apt-get install etcd-server)")
	}
	return p, nil
}

// kubeBinDir prefers an explicit dir, then KUBE_BIN_DIR, then asks scripts/kube-binaries,
// which builds the binaries into its cache the first time (minutes) and prints the dir.
func kubeBinDir(explicit string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	if dir := os.Getenv("KUBE_BIN_DIR"); dir != "" {
		return dir, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	script := filepath.Join(root, "scripts", "kube-binaries")
	cmd := exec.Command(script)
	cmd.Dir = root
	cmd.Stderr = os.Stderr // build progress, so a slow first run is not a silent hang
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s failed (set KUBE_BIN_DIR to use prebuilt binaries): %w", script, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	dir := strings.TrimSpace(lines[len(lines)-1])
	if dir == "" {
		return "", fmt.Errorf("%s printed no bin dir", script)
	}
	return dir, nil
}

// repoRoot walks up from the working directory to the go.mod of this module.
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if isOurModule(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no go.mod of module %s above %s (set KUBE_BIN_DIR)", modulePath, wd)
		}
	}
}

func isOurModule(goMod string) bool {
	data, err := os.ReadFile(goMod)
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`) == modulePath
		}
	}
	return false
}
