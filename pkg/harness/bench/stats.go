package bench

import (
	"math"
	"slices"
)

// Dist summarizes a sample, in simulated seconds.
type Dist struct {
	Count         int
	P50, P95, Max float64
}

// Summarize sorts a copy of xs and takes nearest-rank percentiles, so every
// reported value is one that was measured.
func Summarize(xs []float64) Dist {
	if len(xs) == 0 {
		return Dist{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return Dist{Count: len(s), P50: Percentile(s, 50), P95: Percentile(s, 95), Max: s[len(s)-1]}
}

// Percentile is the nearest-rank p-th percentile of sorted: the smallest
// value with at least p% of the sample at or below it. NaN when empty.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}
