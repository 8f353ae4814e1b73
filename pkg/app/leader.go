package app

// Leader election: the replica holding the Lease runs the controllers. On
// SIGTERM it gives the Lease back at once, so that a rolling update does not
// stall provisioning for the Lease's duration, but only once nothing it
// started is left for a new leader to trip over.

import (
	"context"
	"sync"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	"github.com/rancher/wrangler/v3/pkg/leader"
	"github.com/sirupsen/logrus"
	"k8s.io/client-go/kubernetes"
)

const (
	// drainTimeout bounds the wait for the controllers to stop and for the
	// DigitalOcean requests under way at a stop. With releaseTimeout it
	// fits in Kubernetes' default termination grace period, 30 s.
	drainTimeout = 10 * time.Second
	// releaseTimeout bounds the wait for wrangler to release the Lease and
	// exit the process.
	releaseTimeout = 10 * time.Second
)

// runElected runs the controllers while this replica leads, until ctx ends.
func runElected(ctx context.Context, opts Options, client kubernetes.Interface, readiness *metrics.Readiness,
	clients *digitalocean.Clients) error {
	// The election outlives ctx: ending it makes wrangler release the Lease
	// (when held) and exit the process, which must wait for handOver.
	election, leave := context.WithCancel(context.Background())
	h := &handover{clients: clients, leave: leave}
	errs := make(chan error, 1)
	logrus.WithField("lease", opts.LeaseName).Info("waiting to lead")
	go leader.RunOrDie(election, opts.Namespace, opts.LeaseName, client, func(leading context.Context) {
		stopped, ok := h.begin()
		if !ok {
			return // elected just as the stop began
		}
		defer close(stopped)
		// The controllers stop at the signal already; the Lease is kept
		// until handOver has seen them and their requests end.
		controllers, cancel := context.WithCancel(leading)
		defer cancel()
		defer context.AfterFunc(ctx, cancel)()
		logrus.WithField("lease", opts.LeaseName).Info("elected leader")
		if err := runControllers(controllers, opts, client, readiness, clients); err != nil && ctx.Err() == nil {
			errs <- err
		}
	})
	select {
	case err := <-errs:
		// As after a crash: the Lease expires.
		return err
	case <-ctx.Done():
		h.handOver()
		return nil
	}
}

// handover ends this replica's part in the election in the order that keeps
// the Lease's promise of one leader: controllers, DigitalOcean, Lease.
type handover struct {
	clients *digitalocean.Clients
	// leave ends the election: wrangler releases the Lease if it holds it.
	leave context.CancelFunc

	mu       sync.Mutex
	stopping bool
	stopped  chan struct{} // closed when the controllers stopped; nil if they never started
}

// begin reports whether the controllers may start, and the channel to close
// when they stop.
func (h *handover) begin() (chan struct{}, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopping {
		return nil, false
	}
	h.stopped = make(chan struct{})
	return h.stopped, true
}

// handOver releases the Lease once the controllers stopped and every
// DigitalOcean request they sent is answered and on record. Otherwise it
// keeps the Lease, left to expire as after a crash: a new leader starting
// at once could miss a droplet whose create is unanswered, and make another.
func (h *handover) handOver() {
	deadline := time.Now().Add(drainTimeout)
	h.mu.Lock()
	h.stopping = true
	stopped := h.stopped
	h.mu.Unlock()
	if stopped == nil {
		logrus.Info("stopping: not leading; leaving the leader election")
		h.leave()
		<-time.After(releaseTimeout) // wrangler exits the process meanwhile
		return
	}
	logrus.Info("stopping: the controllers")
	select {
	case <-stopped:
	case <-time.After(time.Until(deadline)):
		logrus.WithField("waited", drainTimeout).Warn("stopping: the controllers did not stop; the lease is left to expire")
		return
	}
	if !drain(h.clients, time.Until(deadline)) {
		logrus.Warn("stopping: the lease is left to expire, so that a new leader finds what those requests made")
		return
	}
	logrus.Info("releasing the lease")
	h.leave()
	<-time.After(releaseTimeout)
	logrus.WithField("waited", releaseTimeout).Warn("the lease was not released; it expires")
}

// drain stops DigitalOcean requests and waits up to timeout for those under way.
func drain(clients *digitalocean.Clients, timeout time.Duration) bool {
	logrus.Info("stopping: waiting for DigitalOcean requests under way")
	if clients.Stop(timeout) {
		return true
	}
	logrus.WithField("waited", timeout).Warn("stopping: DigitalOcean requests still under way")
	return false
}
