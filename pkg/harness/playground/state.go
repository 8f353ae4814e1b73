package playground

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// State is what a running playground writes to its state file, so that the
// helper commands (session, vm, ssh) can find it. It is removed when the
// playground stops.
type State struct {
	PID        int                  `json:"pid"`
	Kubeconfig string               `json:"kubeconfig"`
	Namespace  string               `json:"namespace"`
	Gargantua  gargantuasim.Version `json:"gargantua"`
	// VMSet is the scheduled event's VM set; empty on the claim path (v1.0).
	VMSet       string `json:"vmset,omitempty"`
	Environment string `json:"environment"`
	Template    string `json:"template"`
	// Dir is the playground's temp dir; ssh commands write key files there.
	Dir     string `json:"dir"`
	SSHPort int    `json:"sshPort"`
}

// DefaultStatePath is where scripts/playground's playground writes its state:
// beside the binary, in the user's cache dir.
func DefaultStatePath() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "hf-provisioner-digitalocean", "playground-state.json")
}

// ErrNoPlayground is returned by the helper commands when no playground runs.
var ErrNoPlayground = errors.New("no running playground")

func writeState(path string, s State) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	// Written whole, then renamed: a reader never sees half a file.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// removeState removes the state file if it is still this process's (a
// second playground may have replaced it).
func removeState(path string) error {
	s, err := readStateFile(path)
	if err != nil || s.PID != os.Getpid() {
		return nil
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

func readStateFile(path string) (State, error) {
	var s State
	b, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("reading %s: %w", path, err)
	}
	return s, nil
}

// ReadState reads the state file of a running playground. Without one, or
// when the process that wrote it is gone, the error wraps ErrNoPlayground.
func ReadState(path string) (State, error) {
	s, err := readStateFile(path)
	switch {
	case os.IsNotExist(err):
		return s, fmt.Errorf("%w (no state file %s): start one with scripts/playground", ErrNoPlayground, path)
	case err != nil:
		return s, err
	case !alive(s.PID):
		return s, fmt.Errorf("%w: state file %s is stale (process %d is gone); remove it", ErrNoPlayground, path, s.PID)
	}
	return s, nil
}

// alive reports whether process pid exists (signal 0 checks without sending).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	proc, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = proc.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

// restConfig is the playground's API server, from its kubeconfig.
func (s State) restConfig() (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("%w: reading its kubeconfig: %w", ErrNoPlayground, err)
	}
	return cfg, nil
}
