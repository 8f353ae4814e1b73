package warmpool

import (
	"testing"
	"time"
)

// A pool is looked at again at its next window edge, within the resync.
func TestRequeueAtTheNextWindowEdge(t *testing.T) {
	h := &handler{opts: Options{Resync: time.Minute}}
	for name, c := range map[string]struct {
		next time.Time
		want time.Duration
	}{
		"no edge ahead":    {time.Time{}, time.Minute},
		"edge in 10 s":     {noon.Add(10 * time.Second), 10 * time.Second},
		"edge in an hour":  {noon.Add(time.Hour), time.Minute},
		"edge just passed": {noon.Add(-time.Second), 0},
	} {
		if got := h.requeueAfter(window{Next: c.next}, noon); got != c.want {
			t.Errorf("%s: requeue after %s, want %s", name, got, c.want)
		}
	}
}
