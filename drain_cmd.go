package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/app"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/drain"
	"github.com/sirupsen/logrus"
)

// drainCommand is the subcommand the chart's pre-delete hook runs.
const drainCommand = "drain"

// runDrain is `hf-provisioner-digitalocean drain`: it empties one installation
// before it is uninstalled, or with --release-only releases it for a rollback
// to the original provisioner (see pkg/drain), and returns the exit code; a
// drain that cannot finish prints one line saying why.
func runDrain(args []string, stderr io.Writer) int {
	var opts drain.Options
	var kubeconfig, logLevel, logFormat string
	var timeout time.Duration
	fs := flag.NewFlagSet("hf-provisioner-digitalocean drain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file; in-cluster config when empty (env KUBECONFIG)")
	fs.StringVar(&opts.Namespace, "namespace", os.Getenv("HF_NAMESPACE"), "namespace of the installation to drain (env HF_NAMESPACE)")
	fs.StringVar(&opts.InstallationID, "installation-id", os.Getenv("HF_DO_INSTALLATION_ID"), "the controller's --installation-id, whose droplets are deleted; defaults to the namespace")
	fs.StringVar(&opts.APIURL, "do-api-url", os.Getenv("DIGITALOCEAN_API_URL"), "DigitalOcean API base URL (env DIGITALOCEAN_API_URL)")
	fs.StringVar(&opts.Deployment, "deployment", "", "the controller's Deployment, scaled to 0 before anything is deleted (and back on failure); empty when the controller is stopped already")
	fs.BoolVar(&opts.LeaderElect, "leader-elect", false, "the controller elects a leader: hold its Lease while draining")
	fs.StringVar(&opts.LeaseName, "lease-name", app.DefaultLeaseName, "the controller's leader-election Lease")
	fs.BoolVar(&opts.ReleaseOnly, "release-only", false, "for a rollback to the original (alpha) provisioner: stop the controller, remove its finalizers and delete its Droplets, Keys and WarmPools, "+
		"deleting nothing in DigitalOcean and leaving the original provisioner's objects and finalizers; refused while a Droplet holds a droplet this controller created "+
		"(docs/runbook.md, \"Rolling back to the original provisioner\")")
	fs.DurationVar(&timeout, "timeout", 4*time.Minute, "give up (and scale the controller back) after this long; below helm uninstall's --timeout (5m)")
	fs.StringVar(&logLevel, "log-level", envString("HF_DO_LOG_LEVEL", "info"), "debug, info, warn or error (env HF_DO_LOG_LEVEL)")
	fs.StringVar(&logFormat, "log-format", envString("HF_DO_LOG_FORMAT", "text"), "text or json (env HF_DO_LOG_FORMAT)")
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
	case fs.NArg() > 0:
		err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case opts.Namespace == "":
		err = errors.New("--namespace is required (or set HF_NAMESPACE)")
	case timeout <= 0:
		err = errors.New("--timeout must be positive")
	default:
		err = configureLogging(logLevel, logFormat)
	}
	if err == nil {
		if opts.Config, err = restConfig(kubeconfig); err != nil {
			err = fmt.Errorf("--kubeconfig: %w", err)
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "hf-provisioner-digitalocean drain:", err)
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	report, err := drain.Run(ctx, opts)
	if err != nil {
		fmt.Fprintln(stderr, "hf-provisioner-digitalocean drain:", err)
		return 1
	}
	logrus.Info(report.String())
	return 0
}
