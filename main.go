//go:generate go run ./codegen

// Command hf-provisioner-digitalocean provisions HobbyFarm VirtualMachines as DigitalOcean droplets.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/app"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/droplet"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/virtualmachine"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/warmpool"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Version is set at build time with -ldflags "-X main.Version=...".
var Version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

// run returns the process exit code; bad flags print one line naming the flag.
func run(args []string, stderr io.Writer) int {
	if len(args) > 0 && args[0] == drainCommand {
		return runDrain(args[1:], stderr)
	}
	opts, settings, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "hf-provisioner-digitalocean:", err)
		return 2
	}
	if settings.version {
		fmt.Fprintln(stderr, "hf-provisioner-digitalocean", Version)
		return 0
	}
	if err := configureLogging(settings.logLevel, settings.logFormat); err != nil {
		fmt.Fprintln(stderr, "hf-provisioner-digitalocean:", err)
		return 2
	}
	cfg, err := restConfig(settings.kubeconfig)
	if err != nil {
		fmt.Fprintf(stderr, "hf-provisioner-digitalocean: --kubeconfig: %v\n", err)
		return 2
	}
	opts.Config = cfg

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	logrus.WithField("version", Version).WithField("namespace", opts.Namespace).Info("starting")
	if err := app.Run(ctx, opts); err != nil {
		var unreachable *app.UnreachableError
		if errors.As(err, &unreachable) {
			fmt.Fprintf(stderr, "hf-provisioner-digitalocean: --kubeconfig: %v\n", err)
			return 2
		}
		logrus.Error(err)
		return 1
	}
	logrus.Info("stopped")
	return 0
}

type cliSettings struct {
	kubeconfig, logLevel, logFormat string
	rateLimits, resyncMode          string
	rateLimiter, version            bool
	deleteTainted                   bool
	kubeQPS                         float64
	kubeBurst                       int
}

func parseFlags(args []string, stderr io.Writer) (app.Options, cliSettings, error) {
	var opts app.Options
	var s cliSettings
	fs := flag.NewFlagSet("hf-provisioner-digitalocean", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: hf-provisioner-digitalocean [flags]\n"+
			"       hf-provisioner-digitalocean %s [flags]  (empty an installation before uninstalling it, or release it for a rollback; %s -h)\n", drainCommand, drainCommand)
		fs.PrintDefaults()
	}
	fs.StringVar(&s.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file; in-cluster config when empty (env KUBECONFIG)")
	fs.StringVar(&opts.Namespace, "namespace", os.Getenv("HF_NAMESPACE"), "HobbyFarm namespace to serve (env HF_NAMESPACE, as Gargantua's)")
	fs.StringVar(&opts.APIURL, "do-api-url", os.Getenv("DIGITALOCEAN_API_URL"), "DigitalOcean API base URL (env DIGITALOCEAN_API_URL)")
	fs.IntVar(&opts.Workers, "workers", envInt("HF_DO_WORKERS", 5), "concurrent reconciles per resource (env HF_DO_WORKERS)")
	fs.StringVar(&s.logLevel, "log-level", envString("HF_DO_LOG_LEVEL", "info"), "debug, info, warn or error (env HF_DO_LOG_LEVEL)")
	fs.StringVar(&s.logFormat, "log-format", envString("HF_DO_LOG_FORMAT", "text"), "text or json (env HF_DO_LOG_FORMAT)")
	fs.BoolVar(&opts.InstallCRDs, "install-crds", envBool("HF_DO_INSTALL_CRDS", true), "create or update the Droplet, Key and WarmPool CRDs at start (env HF_DO_INSTALL_CRDS)")
	fs.StringVar(&opts.InstallationID, "installation-id", os.Getenv("HF_DO_INSTALLATION_ID"), "tag value telling this installation's droplets apart; defaults to the namespace")
	fs.BoolVar(&opts.LeaderElect, "leader-elect", envBool("HF_DO_LEADER_ELECT", false), "elect a leader so several replicas are safe (env HF_DO_LEADER_ELECT)")
	fs.StringVar(&opts.LeaseName, "lease-name", app.DefaultLeaseName, "leader-election Lease name; never Gargantua's controller-manager")
	fs.DurationVar(&opts.BootResync, "boot-resync", time.Second, "how often a booting droplet is re-read")
	fs.DurationVar(&opts.ActiveResync, "active-resync", time.Minute, "how often an active droplet is re-read")
	fs.DurationVar(&opts.SweepInterval, "sweep-interval", 10*time.Minute, "how often droplets and keys whose VM is gone are looked for")
	fs.DurationVar(&opts.OrphanGrace, "orphan-grace", 10*time.Minute, "how old an orphaned droplet or key must be before it is deleted")
	fs.DurationVar(&opts.TagTidyDelay, "tag-tidy-delay", app.DefaultTagTidyDelay, "how long droplet deletes must pause before this installation's empty tags are deleted from DigitalOcean, how long each must stay empty first, and how long a batched delete's tag is kept for the next batch")
	fs.DurationVar(&opts.RefusedCreatePause, "refused-create-pause", droplet.DefaultRefusedCreatePause, "how long a create DigitalOcean refused (a 422 or 401) waits before it is sent again unchanged; one refused for the account's droplet limit goes as soon as one of the token's droplets is deleted, first refused first")
	fs.DurationVar(&opts.SoldOutPause, "sold-out-pause", droplet.DefaultSoldOutPause, "how long a region DigitalOcean refused a size in as sold out is passed over for that size: creates go to the next region the Environment's region lists, and one sent after the pause finds out whether it has stock again")
	fs.DurationVar(&opts.KeyDeleteDelay, "key-delete-delay", app.DefaultKeyDeleteDelay, "how long droplet deletes must pause before deleted VMs' SSH keys are deleted from DigitalOcean, so that droplets, which bill, go first")
	fs.DurationVar(&opts.WarmPoolSurplusIdle, "warm-pool-surplus-idle", warmpool.DefaultSurplusIdle, "how long a ready droplet beyond an auto-sized warm pool's size (warm_pool: auto) waits unclaimed before it is deleted, so a lull between two bursts keeps booted droplets")
	fs.StringVar(&s.resyncMode, "resync-mode", string(droplet.ResyncBatched), "batched: one list per token per period for all droplets; per-droplet: a GET each (for comparison only)")
	fs.StringVar(&s.rateLimits, "rate-limits", "250/1m,5000/1h", "DigitalOcean's per-token limits, requests/window, that the client stays under")
	fs.Float64Var(&opts.RateLimits.Headroom, "rate-limit-headroom", digitalocean.DefaultHeadroom, "share of each rate limit left for the token's other users, above 0 and at most 0.9")
	fs.BoolVar(&s.rateLimiter, "rate-limiter", true, "limit DigitalOcean requests client-side; false only for comparison")
	fs.Float64Var(&s.kubeQPS, "kube-qps", 0, "Kubernetes API requests per second at most; 0 for no client-side limit (the apiserver's priority and fairness paces the controller)")
	fs.IntVar(&s.kubeBurst, "kube-burst", 0, "Kubernetes API request burst with --kube-qps; 0 for twice --kube-qps")
	fs.IntVar(&opts.SSHPort, "ssh-port", envInt("HF_DO_SSH_PORT", 22), "port the reachability check logs in to droplets at, as Gargantua's shell does (env HF_DO_SSH_PORT)")
	fs.BoolVar(&s.deleteTainted, "delete-tainted", envBool("HF_DO_DELETE_TAINTED", true), "delete VMs Gargantua tainted at the end of a session, and so their droplets; false keeps them for inspection (env HF_DO_DELETE_TAINTED)")
	fs.DurationVar(&opts.ConfigErrorGrace, "config-error-grace", virtualmachine.DefaultConfigErrorGrace, "how long an invalid config may wait for a fix before its VMs get status errorduringprovisioning")
	fs.StringVar(&opts.MetricsAddr, "metrics-addr", envString("HF_DO_METRICS_ADDR", ":8080"), "address for /metrics, /healthz and /readyz; empty to disable (env HF_DO_METRICS_ADDR)")
	fs.BoolVar(&s.version, "version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return opts, s, err
	}
	if s.version {
		return opts, s, nil
	}
	switch {
	case fs.NArg() > 0:
		return opts, s, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case opts.Namespace == "":
		return opts, s, fmt.Errorf("--namespace is required (or set HF_NAMESPACE)")
	case opts.Workers < 1:
		return opts, s, fmt.Errorf("--workers must be at least 1")
	case opts.LeaseName == "controller-manager":
		return opts, s, fmt.Errorf("--lease-name must not be controller-manager, Gargantua's own lock")
	case opts.RateLimits.Headroom <= 0 || opts.RateLimits.Headroom > 0.9:
		return opts, s, fmt.Errorf("--rate-limit-headroom must be more than 0 and at most 0.9")
	case s.kubeQPS < 0:
		return opts, s, fmt.Errorf("--kube-qps must not be negative")
	case s.kubeBurst < 0:
		return opts, s, fmt.Errorf("--kube-burst must not be negative")
	case opts.SSHPort < 1 || opts.SSHPort > 65535:
		return opts, s, fmt.Errorf("--ssh-port must be a port number, 1 to 65535")
	case opts.ConfigErrorGrace <= 0:
		return opts, s, fmt.Errorf("--config-error-grace must be positive")
	case opts.WarmPoolSurplusIdle <= 0:
		return opts, s, fmt.Errorf("--warm-pool-surplus-idle must be positive")
	}
	opts.KeepTainted = !s.deleteTainted
	// The chart passes the pod's identity through the downward API, for
	// the Events the controller records about itself.
	opts.Pod = app.PodRef{Name: os.Getenv("POD_NAME"), Namespace: os.Getenv("POD_NAMESPACE"), UID: types.UID(os.Getenv("POD_UID"))}
	var err error
	if opts.ResyncMode, err = droplet.ParseResyncMode(s.resyncMode); err != nil {
		return opts, s, fmt.Errorf("--resync-mode: %v", err)
	}
	if opts.RateLimits.Limits, err = digitalocean.ParseRateLimits(s.rateLimits); err != nil {
		return opts, s, fmt.Errorf("--rate-limits: %v", err)
	}
	opts.RateLimits.Disabled = !s.rateLimiter
	opts.KubeQPS = float32(s.kubeQPS)
	opts.KubeBurst = s.kubeBurst
	return opts, s, nil
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		return rest.InClusterConfig()
	}
	if _, err := os.Stat(kubeconfig); err != nil {
		return nil, err
	}
	return clientcmd.BuildConfigFromFlags("", kubeconfig)
}

func configureLogging(level, format string) error {
	lvl, err := logrus.ParseLevel(level)
	if err != nil {
		return fmt.Errorf("--log-level: %q is not one of debug, info, warn, error", level)
	}
	logrus.SetLevel(lvl)
	switch format {
	case "text":
		logrus.SetFormatter(&logrus.TextFormatter{FullTimestamp: true, TimestampFormat: "2006-01-02T15:04:05.000Z07:00"})
	case "json":
		logrus.SetFormatter(&logrus.JSONFormatter{})
	default:
		return fmt.Errorf("--log-format: %q is not text or json", format)
	}
	return nil
}

func envString(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func envBool(name string, def bool) bool {
	if v, err := strconv.ParseBool(os.Getenv(name)); err == nil {
		return v
	}
	return def
}
