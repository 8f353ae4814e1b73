// Package app wires the controllers together; main.go only parses flags.
package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/deletepause"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/droplet"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/environment"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/key"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/sweeper"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/takeover"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/tokensecret"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/virtualmachine"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/warmpool"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/crds"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	"github.com/rancher/wrangler/v3/pkg/apply"
	"github.com/rancher/wrangler/v3/pkg/generated/controllers/core"
	"github.com/rancher/wrangler/v3/pkg/ratelimit"
	"github.com/rancher/wrangler/v3/pkg/start"
	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// DefaultLeaseName is this controller's leader-election lock. It must differ
// from Gargantua's own lock, "controller-manager", in the same namespace.
const DefaultLeaseName = "hf-provisioner-digitalocean"

// Options configure one run of the controller.
type Options struct {
	Config         *rest.Config
	Namespace      string
	APIURL         string
	Workers        int
	InstallCRDs    bool
	InstallationID string
	LeaderElect    bool
	LeaseName      string
	BootResync     time.Duration
	ActiveResync   time.Duration
	// SweepInterval is how often orphaned droplets and keys are looked for.
	SweepInterval time.Duration
	// OrphanGrace is how old an orphan must be before the sweep deletes it.
	OrphanGrace time.Duration
	// TagTidyDelay is how long Droplet deletes must pause before our empty
	// tags are deleted, and how long each must stay empty first.
	TagTidyDelay time.Duration
	// KeyDeleteDelay is how long Droplet deletes must pause before deleted
	// VMs' SSH keys are deleted in DigitalOcean.
	KeyDeleteDelay time.Duration
	// RefusedCreatePause is how long a create DigitalOcean refused waits
	// before it is sent again unchanged (droplet's default when zero).
	RefusedCreatePause time.Duration
	// SoldOutPause is how long a region that refused a size as sold out is
	// passed over for it.
	SoldOutPause time.Duration
	// WarmPoolSurplusIdle is how long a ready member beyond an auto-sized
	// pool's size waits unclaimed before it is deleted (warmpool's default when zero).
	WarmPoolSurplusIdle time.Duration
	// RateLimits configure the per-token DigitalOcean rate limiter.
	RateLimits digitalocean.LimiterOptions
	// ResyncMode is how running droplets are re-read: droplet.ResyncBatched
	// (the default) or droplet.ResyncPerDroplet.
	ResyncMode droplet.ResyncMode
	// KubeQPS and KubeBurst bound this controller's Kubernetes API requests;
	// no bound when KubeQPS is zero.
	KubeQPS   float32
	KubeBurst int
	// SSHPort is where the reachability check logs in to droplets (22 when zero).
	SSHPort int
	// KeepTainted leaves VMs that Gargantua tainted for someone else to
	// delete; by default they are deleted, and their droplets with them.
	KeepTainted bool
	// ConfigErrorGrace is how long an invalid config may wait for a fix
	// before its VMs are reported failed.
	ConfigErrorGrace time.Duration
	// MetricsAddr serves /metrics, /healthz and /readyz; empty for none.
	MetricsAddr string
	// Ready, if set, is closed once caches are synced and handlers run.
	Ready chan<- struct{}
	// CRDCheckInterval is how often the CRDs served are checked while they
	// are not this release's, and how long a mismatch must last before it
	// is reported (DefaultCRDCheckInterval when zero).
	CRDCheckInterval time.Duration
	// Pod is the controller's own Pod, on which Events about the controller
	// itself are recorded; empty outside a pod.
	Pod PodRef
}

// PodRef names a Pod, as the downward API tells a container its own.
type PodRef struct {
	Name, Namespace string
	UID             types.UID
}

func (o *Options) defaults() {
	if o.Workers <= 0 {
		o.Workers = 5
	}
	if o.InstallationID == "" {
		o.InstallationID = o.Namespace
	}
	if o.LeaseName == "" {
		o.LeaseName = DefaultLeaseName
	}
	if o.BootResync <= 0 {
		o.BootResync = time.Second
	}
	if o.ActiveResync <= 0 {
		o.ActiveResync = time.Minute
	}
	if o.SweepInterval <= 0 {
		o.SweepInterval = 10 * time.Minute
	}
	if o.OrphanGrace <= 0 {
		o.OrphanGrace = 10 * time.Minute
	}
	if o.TagTidyDelay <= 0 {
		o.TagTidyDelay = DefaultTagTidyDelay
	}
	if o.KeyDeleteDelay <= 0 {
		o.KeyDeleteDelay = DefaultKeyDeleteDelay
	}
	if o.ResyncMode == "" {
		o.ResyncMode = droplet.ResyncBatched
	}
	if o.CRDCheckInterval <= 0 {
		o.CRDCheckInterval = DefaultCRDCheckInterval
	}
	if o.KubeQPS > 0 && o.KubeBurst < int(o.KubeQPS) {
		o.KubeBurst = int(2 * o.KubeQPS)
	}
}

// DefaultTagTidyDelay: a minute without Droplet deletes is the end of an
// event's deletes, and a minute empty is long after any request that
// relied on a tag.
const DefaultTagTidyDelay = time.Minute

// DefaultKeyDeleteDelay: deleted VMs' keys wait for the end of an event's
// droplet deletes as the tag tidy does; a key costs nothing meanwhile.
const DefaultKeyDeleteDelay = time.Minute

// UnreachableError means the Kubernetes API did not answer at start.
type UnreachableError struct {
	Host string
	Err  error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach the Kubernetes API at %s: %v", e.Host, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Run runs the controller until ctx ends.
func Run(ctx context.Context, opts Options) error {
	opts.defaults()
	cfg := rest.CopyConfig(opts.Config)
	cfg.QPS, cfg.Burst = opts.KubeQPS, opts.KubeBurst
	if opts.KubeQPS <= 0 {
		// A client-side limit queues every write behind all others: an
		// event's 1,000 VMs make about 17,000, and at 200 a second the
		// users waited for their terminals behind their neighbours' status
		// writes. The apiserver's priority and fairness paces a busy client
		// instead.
		cfg.RateLimiter = ratelimit.None
	}
	opts.Config = cfg
	if opts.Namespace == "" {
		return fmt.Errorf("a namespace is required")
	}
	client, err := kubernetes.NewForConfig(opts.Config)
	if err != nil {
		return err
	}
	if _, err := client.Discovery().ServerVersion(); err != nil {
		return &UnreachableError{Host: opts.Config.Host, Err: err}
	}
	if opts.InstallCRDs {
		if err := crds.Install(ctx, opts.Config); err != nil {
			return fmt.Errorf("installing CRDs: %w", err)
		}
	}
	gate := newCRDGate()
	var lease func(context.Context) error
	if opts.LeaderElect {
		// A standby replica is ready while some leader holds the lease.
		lease = leaseHeld(client, opts.Namespace, opts.LeaseName)
	}
	readiness := &metrics.Readiness{Check: func(ctx context.Context) error {
		if err := gate.get(); err != nil {
			return err
		}
		if lease != nil {
			return lease(ctx)
		}
		return errors.New("caches not synced yet")
	}}
	if opts.MetricsAddr != "" {
		addr, err := metrics.Serve(ctx, opts.MetricsAddr, readiness)
		if err != nil {
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		logrus.WithField("addr", addr).Info("serving /metrics, /healthz and /readyz")
	}
	// After the install above, and before any controller starts, on every
	// replica, leading or not.
	if err := waitForCRDs(ctx, opts, client, gate); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	clients := digitalocean.NewClients(opts.APIURL, opts.RateLimits)
	if opts.LeaderElect {
		return runElected(ctx, opts, client, readiness, clients)
	}
	if err := runControllers(ctx, opts, client, readiness, clients); err != nil {
		return err
	}
	// The next process (the chart replaces the pod, never runs two) then
	// finds the answers on record.
	drain(clients, drainTimeout)
	return nil
}

func runControllers(ctx context.Context, opts Options, client kubernetes.Interface, readiness *metrics.Readiness,
	clients *digitalocean.Clients) error {
	factoryOpts := &hobbyfarm.FactoryOptions{Namespace: opts.Namespace}
	hf, err := hobbyfarm.NewFactoryFromConfigWithOptions(opts.Config, factoryOpts)
	if err != nil {
		return err
	}
	prov, err := provisioning.NewFactoryFromConfigWithOptions(opts.Config, factoryOpts)
	if err != nil {
		return err
	}
	coreFactory, err := core.NewFactoryFromConfigWithOptions(opts.Config, factoryOpts)
	if err != nil {
		return err
	}
	applier, err := apply.NewForConfig(opts.Config)
	if err != nil {
		return err
	}

	set := &controllers.Set{
		VMs:             hf.Hobbyfarm().V1().VirtualMachine(),
		Environments:    hf.Hobbyfarm().V1().Environment(),
		Templates:       hf.Hobbyfarm().V1().VirtualMachineTemplate(),
		ScheduledEvents: hf.Hobbyfarm().V1().ScheduledEvent(),
		Droplets:        prov.Provisioning().V1alpha1().Droplet(),
		Keys:            prov.Provisioning().V1alpha1().Key(),
		WarmPools:       prov.Provisioning().V1alpha1().WarmPool(),
		Secrets:         coreFactory.Core().V1().Secret(),
		DigitalOcean:    clients,
		Recorder:        events.NewRecorder(ctx, client, opts.Namespace),
	}
	// DigitalOcean's regions, sizes and images per token, fetched hourly.
	catalogs := digitalocean.NewCatalogs(clients)
	// What the Environment check found, for the VMs: one created for a
	// config already found invalid fails at once.
	verdicts := environment.NewVerdicts()

	virtualmachine.Register(ctx, virtualmachine.Options{InstallationID: opts.InstallationID,
		ConfigErrorGrace: opts.ConfigErrorGrace, DeleteTainted: !opts.KeepTainted, CleanupWorkers: opts.Workers},
		set, verdicts, applier)
	droplet.Register(ctx, droplet.Options{BootResync: opts.BootResync, ActiveResync: opts.ActiveResync,
		Resync: opts.ResyncMode, InstallationTag: digitalocean.InstallationTag(opts.InstallationID),
		SSHPort: opts.SSHPort, DeleteTagReuse: opts.TagTidyDelay, RefusedCreatePause: opts.RefusedCreatePause, SoldOutPause: opts.SoldOutPause, Catalogs: catalogs}, set)
	// Deleted VMs' keys and our empty tags wait for droplet deletes to pause.
	deletes := deletepause.New(time.Now())
	deletes.Register(ctx, set)
	key.Register(ctx, key.Options{DeletePause: deletes, PauseDelay: opts.KeyDeleteDelay}, set)
	takeover.Register(ctx, opts.Namespace, set)
	tokensecret.Register(ctx, set)
	environment.Register(ctx, set, catalogs, verdicts)
	warmpool.Register(ctx, warmpool.Options{InstallationID: opts.InstallationID, SurplusIdle: opts.WarmPoolSurplusIdle}, set)

	metrics.DropletsByStatus(countByStatus(set.Droplets.Cache()))
	metrics.PendingFrom(pendingFrom(set.VMs.Cache(), set.Droplets.Cache(), time.Now))
	metrics.HourlyCost(droplet.HourlyCost(set.Droplets.Cache()))
	synced := make(chan struct{})
	sweeper.Register(ctx, sweeper.Options{Namespace: opts.Namespace, InstallationID: opts.InstallationID,
		Interval: opts.SweepInterval, Grace: opts.OrphanGrace,
		TagTidyDelay: opts.TagTidyDelay, BootBucketLife: droplet.BootBucketLife(opts.BootResync), Pause: deletes},
		set, synced)

	trimCaches(set.VMs.Informer(), set.Environments.Informer(), set.Templates.Informer(), set.Droplets.Informer(),
		set.Keys.Informer(), set.Secrets.Informer(), set.ScheduledEvents.Informer(), set.WarmPools.Informer())
	if err := start.All(ctx, opts.Workers, hf, prov, coreFactory); err != nil {
		return err
	}
	readiness.SetReady()
	metrics.SetControllerReady(true)
	defer metrics.SetControllerReady(false)
	close(synced)
	logrus.WithField("namespace", opts.Namespace).Info("controller ready: caches synced, handlers running")
	if opts.Ready != nil {
		close(opts.Ready)
	}
	<-ctx.Done()
	return nil
}
