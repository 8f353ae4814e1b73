package metrics

import "github.com/prometheus/client_golang/prometheus"

// Batched delete metrics: the droplets of deleted VMs go in batches, each
// tagged with a one-off tag and deleted by it (3 requests a batch).
var (
	// DeleteBatches counts batches whose delete DigitalOcean accepted.
	DeleteBatches = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hf_do_delete_batches_total",
		Help: "Batched droplet deletes DigitalOcean accepted (one-off tag, tag the droplets, delete by the tag).",
	})
	// DeleteBatchDroplets is the number of droplets each batch sent.
	DeleteBatchDroplets = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "hf_do_delete_batch_droplets",
		Help:    "Droplets per batched delete sent to DigitalOcean.",
		Buckets: []float64{1, 2, 5, 10, 20, 50, 100},
	})
	// DeleteBatchFallbacks counts batches deleted one droplet at a time
	// because tagging them answered 404 (a droplet was gone already).
	DeleteBatchFallbacks = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hf_do_delete_batch_fallbacks_total",
		Help: "Batched deletes that fell back to one delete per droplet because a droplet was gone already.",
	})
)

func init() {
	Registry.MustRegister(DeleteBatches, DeleteBatchDroplets, DeleteBatchFallbacks)
}
