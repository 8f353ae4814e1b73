package metrics

import "github.com/prometheus/client_golang/prometheus"

// CostKey is what hf_do_hourly_cost_dollars is broken down by.
type CostKey struct {
	Environment string
	// ScheduledEvent is empty for droplets of no known scheduled event.
	ScheduledEvent string
}

// HourlyCost makes hf_do_hourly_cost_dollars come from cost, read at
// scrape time. The last call wins (tests run the controller several times).
func HourlyCost(cost func() map[CostKey]float64) {
	hourlyCost.set(cost)
}

var hourlyCostDesc = prometheus.NewDesc("hf_do_hourly_cost_dollars",
	"What the existing droplets cost per hour in US dollars (the sum of their sizes' hourly prices), by Environment and scheduled event (empty when none is known).",
	[]string{"environment", "scheduled_event"}, nil)

var hourlyCost = newScraped(func(cost map[CostKey]float64, ch chan<- prometheus.Metric) {
	for key, dollars := range cost {
		ch <- prometheus.MustNewConstMetric(hourlyCostDesc, prometheus.GaugeValue, dollars, key.Environment, key.ScheduledEvent)
	}
}, hourlyCostDesc)

func init() {
	Registry.MustRegister(hourlyCost)
}
