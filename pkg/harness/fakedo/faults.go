package fakedo

import (
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// AnyRoute as a Faults.Rules key applies its rule to every route that has
// no rule of its own.
const AnyRoute = "*"

// Faults is the fault-injection configuration, replaced as a whole by
// SetFaults.
type Faults struct {
	// Rules by route pattern (the Route* constants, e.g. RouteCreateDroplets)
	// or AnyRoute. A route's own rule wins over AnyRoute; they do not merge.
	Rules map[string]FaultRule
}

// FaultRule describes what goes wrong on one route. Faults are applied after
// authentication and rate limiting, in this order: latency, 429 storm,
// error, then (after the handler ran) a dropped response.
type FaultRule struct {
	// ErrorRate (0..1) of requests fail with ErrorStatus (default 500)
	// without being applied.
	ErrorRate   float64
	ErrorStatus int
	// Latency is added to every request; LatencyJitter adds a uniformly
	// random extra in [0, LatencyJitter).
	Latency       time.Duration
	LatencyJitter time.Duration
	// DropResponseAfterApply (0..1) of requests are applied, then the
	// connection is closed without a response ("lost create").
	DropResponseAfterApply float64
	// Force429Until answers 429 with Retry-After until this time (by the
	// server clock).
	Force429Until time.Time
	// NotFoundAfterCreate makes GET /v2/droplets/{id} answer 404 for this
	// long after the droplet's creation (read-after-create lag). Only
	// meaningful on RouteGetDroplet (or AnyRoute).
	NotFoundAfterCreate time.Duration
}

func (r FaultRule) errorStatus() int {
	if r.ErrorStatus == 0 {
		return http.StatusInternalServerError
	}
	return r.ErrorStatus
}

// faultInjector holds the current rules and the seeded random source.
type faultInjector struct {
	mu    sync.RWMutex
	rules map[string]FaultRule

	rngMu sync.Mutex
	rng   *rand.Rand
}

func (f *faultInjector) init(seed int64) {
	f.rng = rand.New(rand.NewPCG(uint64(seed), uint64(seed)^0x9e3779b97f4a7c15))
}

// SetFaults replaces the fault rules; it is safe while requests run.
func (s *Server) SetFaults(faults Faults) {
	rules := make(map[string]FaultRule, len(faults.Rules))
	for k, v := range faults.Rules {
		rules[k] = v
	}
	s.faults.mu.Lock()
	s.faults.rules = rules
	s.faults.mu.Unlock()
}

func (f *faultInjector) ruleFor(pattern string) (FaultRule, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if len(f.rules) == 0 {
		return FaultRule{}, false
	}
	if r, ok := f.rules[pattern]; ok {
		return r, true
	}
	r, ok := f.rules[AnyRoute]
	return r, ok
}

// chance reports true with probability p; it draws from the seeded source
// only when 0 < p < 1 so that fixed rules do not perturb the sequence.
func (f *faultInjector) chance(p float64) bool {
	switch {
	case p <= 0:
		return false
	case p >= 1:
		return true
	}
	f.rngMu.Lock()
	defer f.rngMu.Unlock()
	return f.rng.Float64() < p
}

func (f *faultInjector) latency(r FaultRule) time.Duration {
	d := r.Latency
	if r.LatencyJitter > 0 {
		f.rngMu.Lock()
		d += time.Duration(f.rng.Int64N(int64(r.LatencyJitter)))
		f.rngMu.Unlock()
	}
	return d
}
