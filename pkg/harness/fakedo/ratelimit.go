package fakedo

import (
	"net/http"
	"strconv"
	"sync"
	"time"
)

// slidingWindow is a sliding-log limiter: a request is admitted when fewer
// than limit requests were admitted in the trailing window (now-length, now].
// A slot frees exactly when the oldest admitted request leaves the window,
// which is what DigitalOcean's ratelimit-reset describes.
type slidingWindow struct {
	limit  int
	length int64   // nanoseconds
	stamps []int64 // admitted request times (UnixNano), oldest first
}

func newSlidingWindow(limit int, length time.Duration) slidingWindow {
	return slidingWindow{limit: limit, length: int64(length)}
}

func (w *slidingWindow) prune(now int64) {
	cut := now - w.length
	i := 0
	for i < len(w.stamps) && w.stamps[i] <= cut {
		i++
	}
	if i == len(w.stamps) {
		w.stamps = w.stamps[:0] // reuse the array instead of creeping forward
	} else if i > 0 {
		w.stamps = w.stamps[i:]
	}
}

func (w *slidingWindow) full() bool { return len(w.stamps) >= w.limit }

// freeAt is when the oldest admitted request expires; only valid if non-empty.
func (w *slidingWindow) freeAt() int64 { return w.stamps[0] + w.length }

func (w *slidingWindow) record(now int64) { w.stamps = append(w.stamps, now) }

// rateLimiter holds one token's windows: per "minute", per "hour", and the
// extra limit on listing SSH keys.
type rateLimiter struct {
	mu       sync.Mutex
	disabled bool
	minute   slidingWindow
	hour     slidingWindow
	keyList  slidingWindow
}

func newRateLimiter(c RateLimits) *rateLimiter {
	return &rateLimiter{
		disabled: c.Disabled,
		minute:   newSlidingWindow(c.PerMinute, c.Minute),
		hour:     newSlidingWindow(c.PerHour, c.Hour),
		keyList:  newSlidingWindow(c.KeyListPerWindow, c.KeyListWindow),
	}
}

type rateDecision struct {
	allowed    bool
	limit      int       // the hourly limit, as DigitalOcean reports
	remaining  int       // left in the hourly window after this request
	reset      time.Time // when the oldest request in the hourly window expires
	retryAfter time.Duration
}

// admit decides one request. Rejected requests are not recorded, so a
// client that backs off as told by Retry-After gets through.
func (l *rateLimiter) admit(now time.Time, isKeyList bool) rateDecision {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := now.UnixNano()
	if l.disabled {
		return rateDecision{allowed: true, limit: l.hour.limit, remaining: l.hour.limit,
			reset: time.Unix(0, n+l.hour.length)}
	}
	windows := []*slidingWindow{&l.minute, &l.hour}
	if isKeyList {
		windows = append(windows, &l.keyList)
	}
	var wait int64
	for _, w := range windows {
		w.prune(n)
		if w.full() {
			wait = max(wait, w.freeAt()-n)
		}
	}
	allowed := wait == 0
	if allowed {
		for _, w := range windows {
			w.record(n)
		}
	}
	reset := n + l.hour.length
	if len(l.hour.stamps) > 0 {
		reset = l.hour.freeAt()
	}
	return rateDecision{
		allowed:    allowed,
		limit:      l.hour.limit,
		remaining:  max(0, l.hour.limit-len(l.hour.stamps)),
		reset:      time.Unix(0, reset),
		retryAfter: time.Duration(wait),
	}
}

func (d rateDecision) setHeaders(h http.Header) {
	h.Set("ratelimit-limit", strconv.Itoa(d.limit))
	h.Set("ratelimit-remaining", strconv.Itoa(d.remaining))
	// Unix seconds, rounded up so the reset is never reported early.
	reset := d.reset.Unix()
	if d.reset.Nanosecond() > 0 {
		reset++
	}
	h.Set("ratelimit-reset", strconv.FormatInt(reset, 10))
}
