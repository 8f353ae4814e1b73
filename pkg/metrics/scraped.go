package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// scraped is a collector whose values come from a function the controller
// sets, read at scrape time. Until it is set (this replica runs no
// controllers) it reports nothing; the last set wins (tests run the
// controller several times).
type scraped[T any] struct {
	read  atomic.Pointer[func() T]
	descs []*prometheus.Desc
	// emit sends the metrics of one reading.
	emit func(v T, ch chan<- prometheus.Metric)
}

func newScraped[T any](emit func(v T, ch chan<- prometheus.Metric), descs ...*prometheus.Desc) *scraped[T] {
	return &scraped[T]{descs: descs, emit: emit}
}

func (c *scraped[T]) set(read func() T) { c.read.Store(&read) }

func (c *scraped[T]) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *scraped[T]) Collect(ch chan<- prometheus.Metric) {
	if read := c.read.Load(); read != nil {
		c.emit((*read)(), ch)
	}
}

// gaugeValue is a gauge's value for a yes/no.
func gaugeValue(yes bool) float64 {
	if yes {
		return 1
	}
	return 0
}
