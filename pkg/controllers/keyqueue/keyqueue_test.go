package keyqueue

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
)

// calls counts the work done per key.
type calls struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *calls) add(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[key]++
	return c.n[key]
}

func (c *calls) of(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

// Work that keeps failing is retried MaxRetries times, then dropped; work
// that asks to be done again is, until it says it is done.
func TestRetriesAreBoundedAndRechecksRun(t *testing.T) {
	var c calls
	q := Start(t.Context(), Options{Name: "test", Workers: 2, MaxRetries: 3}, func(key string) (time.Duration, error) {
		n := c.add(key)
		switch {
		case key == "ns/failing":
			return time.Millisecond, errors.New("refused")
		case key == "ns/rechecked" && n < 4:
			return time.Millisecond, nil
		}
		return 0, nil
	})
	q.Add("ns/failing")
	q.Add("ns/rechecked")
	testutil.Eventually(t, 10*time.Second, "work done", func() string {
		if c.of("ns/failing") < 4 || c.of("ns/rechecked") < 4 {
			return "not yet"
		}
		return ""
	})
	// Once through, the queue holds neither key: adding one runs it once.
	q.Add("ns/rechecked")
	testutil.Eventually(t, 10*time.Second, "the key added again is run", func() string {
		if c.of("ns/rechecked") < 5 {
			return "not yet"
		}
		return ""
	})
	if got := c.of("ns/failing"); got != 4 {
		t.Errorf("failing work ran %d times, want 1 + MaxRetries = 4", got)
	}
}
