package fakedo

import "time"

// Timing is the clock-dependent part of Options that SetTiming changes on a
// running server.
type Timing struct {
	// BootDelay, DeleteLag and RateLimits mean what they mean in Options,
	// zero values and NoDelay included.
	BootDelay  time.Duration
	DeleteLag  time.Duration
	RateLimits RateLimits
}

// SetTiming changes the boot delay, the delete lag and the rate limits
// (windows, limits and Disabled) of every account, present and future, while
// requests are being served, e.g. to run a benchmark's phases at different
// time scales.
//
// What is already recorded stays: every window keeps its log of admitted
// requests, and each entry expires once it is older than the new window (a
// shorter window forgets the older entries at the next request; a longer one
// keeps them longer). Droplets keep the boot end they were created with;
// deleted droplets leave lists once the new lag has passed since their
// deletion.
func (s *Server) SetTiming(t Timing) {
	o := Options{BootDelay: t.BootDelay, DeleteLag: t.DeleteLag, RateLimits: t.RateLimits}.withDefaults()
	// accountsMu before timingMu, as newAccount takes them, so no account is
	// made with the old limits after the loop.
	s.accountsMu.Lock()
	defer s.accountsMu.Unlock()
	s.timingMu.Lock()
	s.opts.BootDelay, s.opts.DeleteLag, s.opts.RateLimits = o.BootDelay, o.DeleteLag, o.RateLimits
	s.timingMu.Unlock()
	for _, acc := range s.accounts {
		acc.limiter.retime(o.RateLimits)
	}
}

// bootDelay, deleteLag and rateLimits read the current timing.
func (s *Server) bootDelay() time.Duration {
	s.timingMu.RLock()
	defer s.timingMu.RUnlock()
	return s.opts.BootDelay
}

func (s *Server) deleteLag() time.Duration {
	s.timingMu.RLock()
	defer s.timingMu.RUnlock()
	return s.opts.DeleteLag
}

func (s *Server) rateLimits() RateLimits {
	s.timingMu.RLock()
	defer s.timingMu.RUnlock()
	return s.opts.RateLimits
}

// retime gives the limiter new limits and windows and keeps its logs.
func (l *rateLimiter) retime(c RateLimits) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.disabled = c.Disabled
	l.minute.retime(c.PerMinute, c.Minute)
	l.hour.retime(c.PerHour, c.Hour)
	l.keyList.retime(c.KeyListPerWindow, c.KeyListWindow)
}

// retime keeps the stamps: prune drops those older than the new length.
func (w *slidingWindow) retime(limit int, length time.Duration) {
	w.limit, w.length = limit, int64(length)
}
