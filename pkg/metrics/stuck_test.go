package metrics

import (
	"testing"
	"time"
)

// gathered returns the gauge samples of one family from Registry, keyed by their
// labels' values joined with ",".
func gathered(t *testing.T, name string) map[string]float64 {
	t.Helper()
	families, err := Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			key := ""
			for i, l := range m.GetLabel() {
				if i > 0 {
					key += ","
				}
				key += l.GetValue()
			}
			out[key] = m.GetGauge().GetValue()
		}
	}
	return out
}

func TestPendingIsReadAtScrapeTime(t *testing.T) {
	t.Cleanup(func() { pending.read.Store(nil) })
	pending.read.Store(nil)
	if got := gathered(t, "hf_do_oldest_pending_seconds"); len(got) != 0 {
		t.Errorf("without a reader (no controllers running) want no samples, got %v", got)
	}

	now := Pending{OldestProvisioning: 90 * time.Second, OldestDeleting: 2 * time.Minute, Deleting: 3}
	PendingFrom(func() Pending { return now })
	if got := gathered(t, "hf_do_oldest_pending_seconds"); got[StageProvisioning] != 90 || got[StageDeleting] != 120 || len(got) != 2 {
		t.Errorf("hf_do_oldest_pending_seconds = %v, want provisioning 90, deleting 120", got)
	}
	if got := gathered(t, "hf_do_deletes_pending"); got[""] != 3 {
		t.Errorf("hf_do_deletes_pending = %v, want 3", got)
	}

	// The next scrape sees the caches as they are then, not as at registration.
	now = Pending{}
	if got := gathered(t, "hf_do_oldest_pending_seconds"); got[StageProvisioning] != 0 || got[StageDeleting] != 0 || len(got) != 2 {
		t.Errorf("with nothing pending want both stages at 0 (so alerts resolve), got %v", got)
	}
	if got := gathered(t, "hf_do_deletes_pending"); got[""] != 0 {
		t.Errorf("hf_do_deletes_pending = %v, want 0", got)
	}
}

func TestControllerReadyGauge(t *testing.T) {
	t.Cleanup(func() { SetControllerReady(false) })
	if got := gathered(t, "hf_do_controller_ready"); got[""] != 0 || len(got) != 1 {
		t.Errorf("before ready: %v, want a single 0 (a standby replica reports 0, not nothing)", got)
	}
	SetControllerReady(true)
	if got := gathered(t, "hf_do_controller_ready"); got[""] != 1 {
		t.Errorf("after SetControllerReady(true): %v, want 1", got)
	}
	SetControllerReady(false)
	if got := gathered(t, "hf_do_controller_ready"); got[""] != 0 {
		t.Errorf("after SetControllerReady(false): %v, want 0", got)
	}
}
