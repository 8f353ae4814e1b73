package bench

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// A pool trace is one event's arrivals: an on-demand ScheduledEvent with a
// number of seats (its required_vms), created PreStart before its start
// time, whose users start sessions at seeded times after the start. The
// traces are what a warm pool must serve in practice: a steady stream, a
// workshop (a rush at the start, a lull, a rush after a break) and a trickle,
// plus the workshop with fewer seats than users to hold the pool to the seats
// left.

// Trace names.
const (
	TraceSteady   = "steady"
	TraceWorkshop = "workshop"
	TraceTrickle  = "trickle"
	TraceSeats    = "seats-40"
)

// Shapes of the traces at scale 1 and 60 VMs; Scale shrinks every time but
// DigitalOcean's boot, VMs shrinks every count in proportion.
const (
	// PoolPreStart is how long before its start time each event is made:
	// long enough that a pool which started at the event's creation rather
	// than its lead time shows as droplets before start - poolLeadBound.
	PoolPreStart = 10 * time.Minute
	// poolLeadBound is the longest lead a pool may take before the start: a
	// pool droplet made earlier is made too early.
	poolLeadBound = 5 * time.Minute

	steadyInterval = 3 * time.Second
	steadyEnd      = 5 * time.Minute
	// The workshop: 60 % of the users in its first 3 minutes, 20 % spread
	// over the next 15, 20 % within 2 minutes after a break at minute 20.
	workshopRush     = 3 * time.Minute
	workshopLullEnd  = 18 * time.Minute
	workshopBreak    = 20 * time.Minute
	workshopSecond   = 2 * time.Minute
	workshopEnd      = 25 * time.Minute
	trickleWindow    = 25 * time.Minute
	trickleEnd       = 25 * time.Minute
	seatsTraceSeats  = 40 // of 60
	DefaultPoolSeed  = 1
	DefaultPoolScale = 1.0
)

// PoolTrace is one trace as run, times in seconds from the event's start
// (real time: scale 1 is DigitalOcean's own pace).
type PoolTrace struct {
	Name string `json:"name"`
	// Seed made the arrival times; the seats trace shares the workshop's.
	Seed  uint64 `json:"seed"`
	Seats int    `json:"seats"`
	// PreStart is from the event's creation to its start; End is from its
	// start to its end.
	PreStart float64   `json:"pre_start_seconds"`
	End      float64   `json:"end_seconds"`
	Arrivals []float64 `json:"arrival_seconds"`
}

// VMs is the trace's number of arrivals.
func (t *PoolTrace) VMs() int { return len(t.Arrivals) }

// fromSeconds is a trace's time as a Duration.
func fromSeconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// PoolTraces generates the four traces for vms users (60 in the scenario's
// definition) with every time multiplied by scale (1 for the real run, less
// for a quick check of the harness). The same seed gives the same traces.
func PoolTraces(seed uint64, vms int, scale float64) ([]PoolTrace, error) {
	if vms < 5 {
		return nil, fmt.Errorf("pool traces need at least 5 VMs to keep their shapes, got %d", vms)
	}
	if scale <= 0 || scale > 1 {
		return nil, fmt.Errorf("pool trace scale %v is not within (0, 1]", scale)
	}
	at := func(d time.Duration) float64 { return d.Seconds() * scale }
	pre := at(PoolPreStart)
	steady := PoolTrace{Name: TraceSteady, Seed: seed, Seats: vms, PreStart: pre, End: at(steadyEnd)}
	for i := range vms {
		steady.Arrivals = append(steady.Arrivals, at(time.Duration(i)*steadyInterval))
	}

	rush, lull := vms*36/60, vms*12/60
	second := vms - rush - lull
	r := rand.New(rand.NewPCG(seed, 1))
	var shop []float64
	shop = append(shop, uniform(r, rush, 0, at(workshopRush))...)
	shop = append(shop, uniform(r, lull, at(workshopRush), at(workshopLullEnd))...)
	shop = append(shop, uniform(r, second, at(workshopBreak), at(workshopBreak+workshopSecond))...)
	slices.Sort(shop)
	workshop := PoolTrace{Name: TraceWorkshop, Seed: seed, Seats: vms, PreStart: pre, End: at(workshopEnd), Arrivals: shop}

	rt := rand.New(rand.NewPCG(seed, 2))
	trickle := PoolTrace{Name: TraceTrickle, Seed: seed, Seats: vms, PreStart: pre, End: at(trickleEnd),
		Arrivals: uniform(rt, vms, 0, at(trickleWindow))}
	slices.Sort(trickle.Arrivals)

	seats := workshop
	seats.Name, seats.Seats, seats.Arrivals = TraceSeats, vms*seatsTraceSeats/60, slices.Clone(shop)
	return []PoolTrace{steady, workshop, trickle, seats}, nil
}

// uniform draws n times within [from, to), rounded to the millisecond.
func uniform(r *rand.Rand, n int, from, to float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(int64((from+r.Float64()*(to-from))*1000)) / 1000
	}
	return out
}
