package bench

import (
	"context"
	"time"
)

// A controller restarted with 10,000 objects first re-runs its handlers on
// every one of them (informer start); an event started during that would
// queue behind them, which a controller that has served them for hours never
// does. settle waits until the controller's CPU stays below settledCores for
// settledFor, at most maxSettle.
const (
	settledCores = 0.15
	settledFor   = 3 * time.Second
	maxSettle    = 3 * time.Minute
)

// settle waits for the scenario's controller to finish its start-up work
// and says how long that took (real time); a note if it never did.
func (s *scenario) settle(ctx context.Context) time.Duration {
	began := time.Now()
	pid := s.ctrl.proc.Pid()
	last, err := cpuSeconds(pid)
	if err != nil {
		s.note("settling: %v", err)
		return 0
	}
	quietSince := time.Time{}
	for time.Since(began) < maxSettle {
		if err := s.sleep(ctx, time.Second); err != nil {
			return time.Since(began)
		}
		now, err := cpuSeconds(pid)
		if err != nil {
			s.note("settling: %v", err)
			return time.Since(began)
		}
		busy := now - last
		last = now
		switch {
		case busy >= settledCores:
			quietSince = time.Time{}
		case quietSince.IsZero():
			quietSince = time.Now()
		case time.Since(quietSince) >= settledFor:
			return time.Since(began)
		}
	}
	s.note("the controller was still busy %v after its restart; the next phase started anyway", maxSettle)
	return time.Since(began)
}
