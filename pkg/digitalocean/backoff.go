package digitalocean

import (
	"math/rand/v2"
	"sync"
	"time"
)

// Retry spacing for transient DigitalOcean failures.
const (
	// BackoffBase is the first retry delay after a transient failure.
	BackoffBase = time.Second
	// BackoffMax caps the delay during a long outage.
	BackoffMax = time.Minute
	// CreateSettle is the least wait after a create whose outcome is unknown
	// (no answer, or a 5xx): DigitalOcean may have applied it, and its tag
	// listing may take a moment to show the new droplet. The next pass looks
	// the droplet up by tag before it creates, so waiting is what keeps the
	// lookup from missing it.
	CreateSettle = 10 * time.Second
	// rateLimitSpread spreads objects that were all told the same Retry-After,
	// so they do not come back in one burst.
	rateLimitSpread = 2 * time.Second
)

// Backoff spaces out one object's retries: capped exponential with jitter,
// per object key, so objects that fail together do not retry together and a
// long outage is not polled at a fixed rate. A fixed 10 s retry was both
// slow for a single lost answer and a steady hammer during an outage.
type Backoff struct {
	mu       sync.Mutex
	failures map[string]int
}

// NewBackoff returns an empty Backoff.
func NewBackoff() *Backoff { return &Backoff{failures: map[string]int{}} }

// Delay is how long object key should wait after failure f, counting f as
// one more failure in a row.
func (b *Backoff) Delay(key string, f Failure) time.Duration {
	switch f.Reason {
	case "Unavailable", "NotFound":
		return b.next(key)
	case "RateLimited":
		// DigitalOcean said when; the jitter only spreads the comeback.
		return f.RetryAfter + jitter(rateLimitSpread)
	default:
		return f.RetryAfter
	}
}

// next counts a failure of key and returns its delay: half of
// min(BackoffMax, BackoffBase·2^(n-1)) plus a random part of the other half.
func (b *Backoff) next(key string) time.Duration {
	b.mu.Lock()
	n := b.failures[key]
	b.failures[key] = n + 1
	b.mu.Unlock()
	d := BackoffMax
	if n < 16 {
		d = min(BackoffMax, BackoffBase<<n)
	}
	return d/2 + jitter(d/2)
}

// Reset forgets key's failures after it succeeded (or went away).
func (b *Backoff) Reset(key string) {
	b.mu.Lock()
	delete(b.failures, key)
	b.mu.Unlock()
}

func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return rand.N(d)
}
