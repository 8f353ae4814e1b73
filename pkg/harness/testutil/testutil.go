// Package testutil holds small helpers shared by the test suites.
package testutil

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

// SyncBuffer is a bytes.Buffer safe for a writer (a process, the controller's
// goroutines) while the test reads it.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Eventually polls cond until it returns "" (done), failing the test with
// cond's last word after timeout.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		if last = cond(); last == "" {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: not done after %v: %s", what, timeout, last)
}
