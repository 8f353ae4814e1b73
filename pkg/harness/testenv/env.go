// Package testenv runs a real etcd, kube-apiserver and kube-controller-manager on
// loopback for integration tests, with HobbyFarm's CRDs at hand.
package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
)

// Options tune Start. The zero value is what most tests want.
type Options struct {
	// KubeBinDir holds kube-apiserver and kube-controller-manager. Default: $KUBE_BIN_DIR,
	// else the dir printed by scripts/kube-binaries (which builds them once).
	KubeBinDir string
	// EtcdBin is the etcd binary. Default: $ETCD_BIN, else etcd from PATH.
	EtcdBin string
	// BaseDir is where the Env's temp dir (logs, certs, kubeconfig) is made.
	// Default: $HF_TESTENV_DIR, else the system temp dir. etcd's data goes to /dev/shm.
	BaseDir string
	// StartTimeout bounds starting the processes (not building binaries). Default 60 s.
	StartTimeout time.Duration
	// CRDs are installed before kube-controller-manager starts, so its garbage collector
	// watches them from the beginning instead of after its 30 s discovery resync.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// KeepDir keeps the temp dir and etcd's data after Stop. Also $HF_TESTENV_KEEP=1.
	// Without it, Dir is still kept (without etcd data) when Start or the tests fail.
	KeepDir bool
}

// Env is a running control plane. Its methods are safe for concurrent use.
type Env struct {
	// Dir holds certs, the kubeconfig and one log file per process (etcd's data is on tmpfs).
	Dir string
	// KubeconfigPath is an admin kubeconfig, e.g. for `kubectl --kubeconfig`.
	KubeconfigPath string

	host        string
	certs       *pki
	etcdDataDir string
	keepAll     bool // explicitly asked for: keep etcd data too
	keepLogs    bool // something failed: keep Dir for its logs

	mu                sync.Mutex // serializes restarts and Stop
	etcd              *process
	apiserver         *process
	controllerManager *process
	stopped           bool
}

// Start runs etcd, kube-apiserver and kube-controller-manager and waits until all are
// ready. On failure everything started is stopped, and the error names the kept temp dir
// and ends with the tail of the failing process's log.
func Start(ctx context.Context, opts Options) (*Env, error) {
	bins, err := findBinaries(opts)
	if err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()

	dir, err := os.MkdirTemp(baseDir(opts.BaseDir), "hf-testenv-")
	if err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	env := &Env{
		Dir:            dir,
		KubeconfigPath: filepath.Join(dir, "admin.kubeconfig"),
		keepAll:        opts.KeepDir || os.Getenv("HF_TESTENV_KEEP") == "1",
	}
	if err := env.start(ctx, bins, opts); err != nil {
		env.keepLogsOnStop()
		_ = env.Stop()
		return nil, fmt.Errorf("testenv: start failed (logs kept in %s): %w", dir, err)
	}
	return env, nil
}

// start starts etcd, kube-apiserver and kube-controller-manager, each on
// ports picked just before it starts (onFreePorts).
func (e *Env) start(ctx context.Context, bins binaries, opts Options) error {
	var err error
	if e.certs, err = newPKI(e.Dir); err != nil {
		return err
	}
	if e.etcdDataDir, err = newEtcdDataDir(e.Dir); err != nil {
		return err
	}
	var etcdURL string
	err = onFreePorts(2, func(ports []int) error {
		// A run that failed may have written the data dir for its ports.
		if err := resetDir(e.etcdDataDir); err != nil {
			return err
		}
		etcdURL = "http://127.0.0.1:" + strconv.Itoa(ports[0])
		e.etcd = newEtcd(bins.etcd, e.Dir, e.etcdDataDir, ports[0], ports[1])
		return startAndWait(ctx, e.etcd, etcdHealthy(etcdURL))
	})
	if err != nil {
		return err
	}

	err = onFreePorts(1, func(ports []int) error {
		e.host = "https://127.0.0.1:" + strconv.Itoa(ports[0])
		e.apiserver = newAPIServer(bins.apiserver, e.Dir, ports[0], etcdURL, e.certs)
		err := e.startAPIServer(ctx)
		if err != nil {
			e.apiserver.stop()
		}
		return err
	})
	if err != nil {
		return err
	}
	if err := writeKubeconfig(e.KubeconfigPath, e.Config()); err != nil {
		return err
	}
	// Listable CRDs are enough for the garbage collector's discovery; the apiserver's
	// hold on early creates (see createDelayWindow) passes while the controller-manager starts.
	createsFastAt, err := e.applyCRDs(ctx, opts.CRDs)
	if err != nil {
		return err
	}

	err = onFreePorts(1, func(ports []int) error {
		e.controllerManager = newControllerManager(bins.controllerManager, e.Dir, ports[0], e.KubeconfigPath, e.certs)
		return startAndWait(ctx, e.controllerManager, controllerManagerHealthy(ports[0]))
	})
	if err != nil {
		return err
	}
	return sleepUntil(ctx, createsFastAt)
}

// startAndWait starts p and waits until check passes; p is stopped if it
// does not.
func startAndWait(ctx context.Context, p *process, check func(context.Context) error) error {
	if err := p.start(); err != nil {
		return err
	}
	if err := p.waitReady(ctx, check); err != nil {
		p.stop()
		return err
	}
	return nil
}

// resetDir empties dir, keeping it.
func resetDir(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Mkdir(dir, 0o700)
}

func (e *Env) startAPIServer(ctx context.Context) error {
	if err := e.apiserver.start(); err != nil {
		return err
	}
	client, err := rest.HTTPClientFor(e.Config())
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()
	return e.apiserver.waitReady(ctx, apiServerReady(client, e.host))
}

// Config returns a fresh admin rest.Config (system:masters), QPS 200 / Burst 400.
func (e *Env) Config() *rest.Config {
	return adminRESTConfig(e.host, e.certs)
}

// restartTimeout bounds RestartAPIServer when the caller's context has no earlier deadline.
const restartTimeout = 60 * time.Second

// RestartAPIServer stops kube-apiserver and starts it again on the same port and etcd,
// returning once it is ready. Clients reconnect by themselves; watches are re-established
// by informers.
func (e *Env) RestartAPIServer(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, restartTimeout)
	defer cancel()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return errors.New("testenv: env is stopped")
	}
	e.apiserver.stop()
	if err := e.startAPIServer(ctx); err != nil {
		return fmt.Errorf("testenv: restart kube-apiserver (files in %s): %w", e.Dir, err)
	}
	return nil
}

// Stop terminates all processes (SIGTERM, SIGKILL after 5 s) and removes etcd's data
// and Dir unless they are to be kept. Calling it again does nothing.
func (e *Env) Stop() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return nil
	}
	e.stopped = true
	e.stopProcesses()
	if e.keepAll {
		fmt.Fprintf(os.Stderr, "testenv: kept %s and etcd data in %s\n", e.Dir, e.etcdDataDir)
		return nil
	}
	var errs []error
	if e.etcdDataDir != "" {
		errs = append(errs, os.RemoveAll(e.etcdDataDir))
	}
	if !e.keepLogs {
		errs = append(errs, os.RemoveAll(e.Dir))
	}
	return errors.Join(errs...)
}

// keepLogsOnStop makes Stop keep Dir, because something failed.
func (e *Env) keepLogsOnStop() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.keepLogs = true
}

// stopProcesses stops dependents before what they depend on, so none logs spurious errors.
func (e *Env) stopProcesses() {
	for _, p := range []*process{e.controllerManager, e.apiserver, e.etcd} {
		if p != nil {
			p.stop()
		}
	}
}

func baseDir(explicit string) string {
	if explicit != "" {
		return explicit
	}
	return os.Getenv("HF_TESTENV_DIR") // "" means the system temp dir
}
