// Package drain empties one installation of the provisioner so that it can be
// uninstalled without leaving droplets that bill or objects that cannot be
// deleted. It is the binary's `drain` subcommand, which the chart runs as a
// pre-delete hook of `helm uninstall`:
//
//  1. stop the controller: scale its Deployment to 0, wait until its pods are
//     gone and, with leader election, hold its Lease, so that nothing creates
//     while the drain deletes;
//  2. in DigitalOcean, under every token the installation uses, delete its
//     droplets (by its installation tag), its Keys' SSH keys, and the droplets
//     and SSH keys the original alpha provisioner's Droplets and Keys record
//     (by ID), and wait until DigitalOcean lists none of them;
//  3. in Kubernetes, release the finalizers of ours and of the alpha's (never
//     Gargantua's) and delete the Droplets, Keys and WarmPools, the alpha's
//     included.
//
// Anything that stops it (a token DigitalOcean refuses, a Secret gone) ends it
// with an error that names the cause, before step 3, with the controller
// scaled back up: the uninstall is refused and nothing is left unowned.
//
// With Options.ReleaseOnly it prepares a rollback to the alpha instead (see
// releaseOnly): step 1, then step 3 for what is ours only, with nothing
// deleted in DigitalOcean.
package drain

import (
	"context"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Options say which installation to drain.
type Options struct {
	Config    *rest.Config
	Namespace string
	// InstallationID is the controller's --installation-id (default: Namespace).
	InstallationID string
	// APIURL is DigitalOcean's API ("" for its public one).
	APIURL string
	// Deployment is the controller's Deployment, scaled to 0 first; empty when
	// the controller is stopped already.
	Deployment string
	// LeaderElect: the controller elects a leader through Lease LeaseName,
	// which the drain holds while it works.
	LeaderElect bool
	LeaseName   string
	// Poll is how often a wait looks again (default 2 s).
	Poll time.Duration
	// ReleaseOnly releases this controller's hold for a rollback to the
	// original alpha provisioner, deleting nothing in DigitalOcean and
	// leaving every object and finalizer of the alpha's (see releaseOnly).
	ReleaseOnly bool
}

// Report is what a drain deleted and released.
type Report struct {
	Tokens, Droplets, Keys int
	// Released counts the objects whose finalizers were removed.
	Released int
	// ReleaseOnly: nothing was deleted in DigitalOcean (Options.ReleaseOnly).
	ReleaseOnly bool
}

func (r Report) String() string {
	if r.ReleaseOnly {
		return fmt.Sprintf("released for a rollback to the original provisioner: this controller's finalizers removed from %d objects and its Droplets, Keys and WarmPools deleted; nothing deleted in DigitalOcean, nothing of the original provisioner's touched",
			r.Released)
	}
	return fmt.Sprintf("drained: %d droplets and %d SSH keys deleted in DigitalOcean under %d tokens, finalizers released on %d objects",
		r.Droplets, r.Keys, r.Tokens, r.Released)
}

// kube holds the Kubernetes clients of a drain.
type kube struct {
	client kubernetes.Interface
	dyn    dynamic.Interface
}

// Run drains the installation; see the package doc. On error the controller
// runs again as it did before.
func Run(ctx context.Context, opts Options) (Report, error) {
	if opts.InstallationID == "" {
		opts.InstallationID = opts.Namespace
	}
	if opts.Poll <= 0 {
		opts.Poll = 2 * time.Second
	}
	client, err := kubernetes.NewForConfig(opts.Config)
	if err != nil {
		return Report{}, err
	}
	dyn, err := dynamic.NewForConfig(opts.Config)
	if err != nil {
		return Report{}, err
	}
	k := kube{client: client, dyn: dyn}

	restore, err := stopController(ctx, k, opts)
	if err != nil {
		return Report{}, err
	}
	report, err := whileLeading(ctx, k, opts, func(ctx context.Context) (Report, error) {
		if opts.ReleaseOnly {
			return releaseOnly(ctx, k, opts)
		}
		return empty(ctx, k, opts)
	})
	if err != nil {
		restore()
		return report, err
	}
	return report, nil
}

// empty deletes what the installation holds in DigitalOcean, then releases
// its objects.
func empty(ctx context.Context, k kube, opts Options) (Report, error) {
	objs, err := readObjects(ctx, k, opts.Namespace)
	if err != nil {
		return Report{}, err
	}
	tokens, err := tokensOf(ctx, k, opts.Namespace, objs)
	if err != nil {
		return Report{}, err
	}
	rec := alphaRecordsOf(objs)
	if len(tokens) == 0 {
		if err := rec.needToken(); err != nil {
			return Report{}, err
		}
	}
	report := Report{Tokens: len(tokens)}
	foundDroplets, foundKeys := map[int]bool{}, map[int]bool{}
	for _, t := range tokens {
		logrus.WithField("token_hash", t.hash).WithField("secrets", t.names()).Info("deleting this installation's droplets and SSH keys")
		e, err := emptyAccount(ctx, t.token, opts, objs.keys, rec)
		report.Droplets += e.droplets
		report.Keys += e.keys
		if err != nil {
			return report, fmt.Errorf("token %s (%s): %w", t.hash, t.names(), err)
		}
		for _, id := range e.alphaDroplets {
			foundDroplets[id] = true
		}
		for _, id := range e.alphaKeys {
			foundKeys[id] = true
		}
	}
	rec.logUnfound(foundDroplets, foundKeys)
	released, err := release(ctx, k, opts.Namespace, drainRules)
	report.Released = released
	return report, err
}
