package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Pending is what the controller is still waiting on, read from its caches.
type Pending struct {
	// OldestProvisioning is the age of the oldest VM of ours that is neither
	// running nor failed nor going away; zero when there is none.
	OldestProvisioning time.Duration
	// OldestDeleting is how long the longest-deleting Droplet has been
	// deleting; zero when none is.
	OldestDeleting time.Duration
	// Deleting counts Droplets being deleted whose finalizer is not released yet.
	Deleting int
}

// Stages of hf_do_oldest_pending_seconds.
const (
	StageProvisioning = "provisioning"
	StageDeleting     = "deleting"
)

// PendingFrom makes hf_do_oldest_pending_seconds{stage} and hf_do_deletes_pending
// come from read, called at scrape time. The last call wins, as for DropletsByStatus.
func PendingFrom(read func() Pending) {
	pending.set(read)
}

// SetControllerReady sets hf_do_controller_ready: 1 while this replica runs the
// controllers with synced caches (it leads, with leader election), else 0.
// Standby replicas report 0, so "no replica at 1" means nothing provisions.
func SetControllerReady(ready bool) {
	controllerReady.Set(gaugeValue(ready))
}

var controllerReady = prometheus.NewGauge(prometheus.GaugeOpts{
	Name: "hf_do_controller_ready",
	Help: "1 while this replica runs the controllers with synced caches (the leader), else 0.",
})

var (
	oldestPendingDesc = prometheus.NewDesc("hf_do_oldest_pending_seconds",
		"Age of the oldest VM of ours not yet running (stage=provisioning, from the VM's creation) and of the longest-deleting Droplet (stage=deleting, from its deletion); 0 when none.",
		[]string{"stage"}, nil)
	deletesPendingDesc = prometheus.NewDesc("hf_do_deletes_pending",
		"Droplet objects being deleted whose DigitalOcean delete is not confirmed yet.", nil, nil)
)

var pending = newScraped(func(p Pending, ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(oldestPendingDesc, prometheus.GaugeValue, p.OldestProvisioning.Seconds(), StageProvisioning)
	ch <- prometheus.MustNewConstMetric(oldestPendingDesc, prometheus.GaugeValue, p.OldestDeleting.Seconds(), StageDeleting)
	ch <- prometheus.MustNewConstMetric(deletesPendingDesc, prometheus.GaugeValue, float64(p.Deleting))
}, oldestPendingDesc, deletesPendingDesc)

func init() {
	Registry.MustRegister(controllerReady, pending)
}
