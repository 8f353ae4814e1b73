package metrics

import "github.com/prometheus/client_golang/prometheus"

// Warm pool metrics, by the pool's Environment and template.
var (
	// WarmPoolSize is each pool's wanted, ready and booting member count.
	WarmPoolSize = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "hf_do_warm_pool_size",
		Help: "Warm pool members by state: wanted (the current target), ready (reachable, unclaimed) and booting.",
	}, []string{"environment", "template", "state"})
	// WarmPoolClaims counts pool hits: members handed over to a VM.
	WarmPoolClaims = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hf_do_warm_pool_claims_total",
		Help: "Warm pool droplets handed over to a VM (pool hits).",
	}, []string{"environment", "template"})
	// WarmPoolMisses counts VMs of a pool's template that found no ready member.
	WarmPoolMisses = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hf_do_warm_pool_misses_total",
		Help: "VMs of a warm pool's Environment and template that found no ready member and were created the normal way.",
	}, []string{"environment", "template"})
	// WarmPoolDropletSeconds accumulates the running time of unclaimed members.
	WarmPoolDropletSeconds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hf_do_warm_pool_droplet_seconds_total",
		Help: "Seconds of droplet time spent by unclaimed warm pool members (divide by 3600 for droplet-hours).",
	}, []string{"environment", "template"})
	// WarmPoolArrivals is an auto-sized pool's recent arrival rate.
	WarmPoolArrivals = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "hf_do_warm_pool_arrivals_per_minute",
		Help: "Recent arrivals (VMs created) per minute of an auto-sized warm pool's Environment and template, what its size is chosen from.",
	}, []string{"environment", "template"})
	// WarmPoolRefillSeconds is a pool's learned refill time.
	WarmPoolRefillSeconds = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "hf_do_warm_pool_refill_seconds",
		Help: "Learned time from an auto-sized warm pool member's create to claimable, what its size is chosen from.",
	}, []string{"environment", "template"})
)

// Warm pool size states.
const (
	WarmPoolWanted  = "wanted"
	WarmPoolReady   = "ready"
	WarmPoolBooting = "booting"
)

// WarmPoolMiss records a VM that a pool of its Environment and template
// could not serve.
func WarmPoolMiss(environment, template string) {
	WarmPoolMisses.WithLabelValues(environment, template).Inc()
}

// ForgetWarmPool drops a deleted pool's gauges.
func ForgetWarmPool(environment, template string) {
	for _, state := range []string{WarmPoolWanted, WarmPoolReady, WarmPoolBooting} {
		WarmPoolSize.DeleteLabelValues(environment, template, state)
	}
	ForgetWarmPoolAuto(environment, template)
}

// WarmPoolAuto records what an auto-sized pool's size was chosen from.
func WarmPoolAuto(environment, template string, arrivalsPerMinute float64, refillSeconds int) {
	WarmPoolArrivals.WithLabelValues(environment, template).Set(arrivalsPerMinute)
	WarmPoolRefillSeconds.WithLabelValues(environment, template).Set(float64(refillSeconds))
}

// ForgetWarmPoolAuto drops the auto-sizing gauges of a pool that is not
// auto-sized (any more).
func ForgetWarmPoolAuto(environment, template string) {
	WarmPoolArrivals.DeleteLabelValues(environment, template)
	WarmPoolRefillSeconds.DeleteLabelValues(environment, template)
}

func init() {
	Registry.MustRegister(WarmPoolSize, WarmPoolClaims, WarmPoolMisses, WarmPoolDropletSeconds, WarmPoolArrivals, WarmPoolRefillSeconds)
}
