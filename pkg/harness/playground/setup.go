package playground

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/app"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/crds"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	"github.com/sirupsen/logrus"
)

// playground is one run's state; teardown undoes whatever of it exists.
type playground struct {
	opts Options
	out  io.Writer

	dir, logPath string
	logFile      *os.File
	prevLogOut   io.Writer

	env      *testenv.Env
	do       *fakedo.Server
	hf       *gargantuasim.Clients
	droplets provcontrollers.DropletClient
	keys     provcontrollers.KeyClient
	pools    provcontrollers.WarmPoolClient
	hfEnv    *hfv1.Environment
	garg     *gargantuasim.Gargantua

	stopGargantua context.CancelFunc
	gargantuaDone chan struct{} // closed when Gargantua.Run returned
	gargantuaErr  error         // valid once gargantuaDone is closed
	stateWritten  bool

	stopController context.CancelFunc
	controllerDone chan struct{} // closed when app.Run returned
	controllerErr  error         // valid once controllerDone is closed
}

func (p *playground) makeDir() error {
	dir, err := os.MkdirTemp(p.opts.BaseDir, "hf-playground-")
	if err != nil {
		return err
	}
	p.dir, p.opts.Result.Dir = dir, dir
	fmt.Fprintf(p.out, "temp dir %s\n", dir)
	return nil
}

// start brings up the control plane, the fake, the HobbyFarm objects and the controller.
func (p *playground) start(ctx context.Context) error {
	ours, err := crds.Objects()
	if err != nil {
		return err
	}
	began := time.Now()
	p.env, err = testenv.Start(ctx, testenv.Options{
		CRDs: append(testenv.HobbyFarmCRDs(), ours...), BaseDir: p.dir, KeepDir: p.opts.Keep,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(p.out, "control plane up (etcd, kube-apiserver, kube-controller-manager) in %.1fs\n", time.Since(began).Seconds())

	p.do = fakedo.New(fakedo.Options{SSH: true, BootDelay: p.opts.BootDelay})
	if err := p.do.Start(); err != nil {
		return err
	}
	p.do.AddAccount(Token, fakedo.AccountOptions{})
	if p.opts.faults != nil {
		p.do.SetFaults(*p.opts.faults)
	}
	fmt.Fprintf(p.out, "fake DigitalOcean API at %s (token %s, boot delay %v)\n", p.do.URL(), Token, p.opts.BootDelay)

	if err := p.createObjects(); err != nil {
		return err
	}
	if err := p.startController(ctx); err != nil {
		return err
	}
	return p.startGargantua()
}

// startGargantua runs the simulated Gargantua's reactive loops (VM set
// controller; for v3.3 also its terraform service) on the static path. Like
// the controller it outlives Ctrl-C: teardown needs it to release the VM
// set's finalizer.
func (p *playground) startGargantua() error {
	fmt.Fprintln(p.out, describeGargantua(p.opts.Gargantua))
	if !p.static() {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.stopGargantua, p.gargantuaDone = cancel, make(chan struct{})
	go func() {
		defer close(p.gargantuaDone)
		p.gargantuaErr = p.garg.Run(ctx)
	}()
	loops := "VM set controller"
	if p.opts.Gargantua >= gargantuasim.V3_3 {
		loops += ", terraform service"
	}
	fmt.Fprintf(p.out, "Gargantua %s running (%s)\n", p.opts.Gargantua, loops)
	return nil
}

// createObjects writes what an operator sets up before any VM exists.
func (p *playground) createObjects() error {
	cfg := p.env.Config()
	var err error
	p.hfEnv, err = gargantuasim.CreateSetup(context.Background(), cfg, gargantuasim.Setup{
		Namespace: Namespace, Token: Token, TokenSecret: TokenSecret,
		Template: TemplateName, Image: Image, Size: Size, Region: Region, Env: EnvName,
		Extra: p.opts.poolSettings(),
	})
	if err != nil {
		return err
	}
	if p.garg, err = gargantuasim.New(cfg, Namespace, p.opts.Gargantua); err != nil {
		return err
	}
	p.hf = p.garg.Clients
	prov, err := provisioning.NewFactoryFromConfig(cfg)
	if err != nil {
		return err
	}
	p.droplets = prov.Provisioning().V1alpha1().Droplet()
	p.keys = prov.Provisioning().V1alpha1().Key()
	p.pools = prov.Provisioning().V1alpha1().WarmPool()
	fmt.Fprintf(p.out, "namespace %s: secret %s, template %s, environment %s\n", Namespace, TokenSecret, TemplateName, EnvName)
	return nil
}

// startController runs the controller in-process. Its context is not ctx:
// it must outlive Ctrl-C to delete the droplets. Its logs go to a file so the
// terminal shows only the playground's progress.
func (p *playground) startController(ctx context.Context) error {
	p.logPath = filepath.Join(p.dir, "controller.log")
	f, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	p.logFile, p.prevLogOut = f, logrus.StandardLogger().Out
	logrus.SetOutput(f)

	ctrlCtx, cancel := context.WithCancel(context.Background())
	p.stopController, p.controllerDone = cancel, make(chan struct{})
	ready := make(chan struct{})
	go func() {
		defer close(p.controllerDone)
		p.controllerErr = app.Run(ctrlCtx, app.Options{
			Config: p.env.Config(), Namespace: Namespace, APIURL: p.do.URL(), InstallCRDs: false,
			BootResync: time.Second, ActiveResync: 10 * time.Second, Ready: ready, SSHPort: p.do.SSHPort(),
			// A handful of VMs: their keys need not wait a minute for more
			// droplet deletes, and the teardown waits for the keys.
			KeyDeleteDelay: 2 * time.Second,
		})
	}()
	select {
	case <-ready:
		fmt.Fprintf(p.out, "controller running (log: %s)\n", p.logPath)
		return nil
	case <-p.controllerDone:
		return fmt.Errorf("controller exited before ready: %v (log: %s)", p.controllerErr, p.logPath)
	case <-time.After(controllerReadyTimeout):
		return fmt.Errorf("controller not ready after %v (log: %s)", controllerReadyTimeout, p.logPath)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// controllerExited reports the controller's (or the simulated Gargantua's)
// error if it stopped on its own.
func (p *playground) controllerExited() error {
	select {
	case <-p.controllerDone:
		return fmt.Errorf("controller exited: %v (log: %s)", p.controllerErr, p.logPath)
	default:
	}
	if p.gargantuaDone == nil {
		return nil
	}
	select {
	case <-p.gargantuaDone:
		return fmt.Errorf("simulated Gargantua exited: %v", p.gargantuaErr)
	default:
		return nil
	}
}

// writeState writes the state file the helper commands read.
func (p *playground) writeState() error {
	if p.opts.StatePath == "" {
		return nil
	}
	s := State{
		PID: os.Getpid(), Kubeconfig: p.env.KubeconfigPath, Namespace: Namespace, Gargantua: p.opts.Gargantua,
		Environment: EnvName, Template: TemplateName, Dir: p.dir, SSHPort: p.do.SSHPort(),
	}
	if p.static() {
		s.VMSet = VMSetName
	}
	if err := writeState(p.opts.StatePath, s); err != nil {
		return fmt.Errorf("writing state file: %w", err)
	}
	p.stateWritten = true
	return nil
}

// teardown stops dependents first (controller, then the fake, then the
// control plane). After a failure the temp dir stays for its logs.
func (p *playground) teardown(failed bool) error {
	var errs []error
	if p.stateWritten {
		errs = append(errs, removeState(p.opts.StatePath))
	}
	if p.stopGargantua != nil {
		errs = append(errs, p.stopAndWait("simulated Gargantua", p.stopGargantua, p.gargantuaDone, &p.gargantuaErr))
	}
	if p.stopController != nil {
		errs = append(errs, p.stopAndWait("controller", p.stopController, p.controllerDone, &p.controllerErr))
	}
	if p.do != nil {
		p.do.Close()
		fmt.Fprintln(p.out, "fake DigitalOcean stopped")
	}
	if p.env != nil {
		errs = append(errs, p.env.Stop())
		fmt.Fprintln(p.out, "control plane stopped")
	}
	// Last, because wrangler's workers still log a while after app.Run returned.
	if p.logFile != nil {
		logrus.SetOutput(p.prevLogOut)
		errs = append(errs, p.logFile.Close())
	}
	switch {
	case p.opts.Keep || failed:
		fmt.Fprintf(p.out, "kept %s\n", p.dir)
	case p.dir != "":
		errs = append(errs, os.RemoveAll(p.dir))
		fmt.Fprintf(p.out, "removed %s\n", p.dir)
	}
	return errors.Join(errs...)
}

// stopAndWait stops what runs in the background and returns its error,
// which is only read once done is closed.
func (p *playground) stopAndWait(what string, stop func(), done <-chan struct{}, result *error) error {
	stop()
	defer fmt.Fprintln(p.out, what+" stopped")
	select {
	case <-done:
		return *result
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s did not stop within 10s", what)
	}
}
