package reliability

import (
	"context"
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
)

// TestAPIServerRestartMidProvisioning restarts kube-apiserver (on a private
// control plane) while 10 VMs provision and creates are in flight, so status
// writes after successful creates fail and every watch breaks. Every VM must
// still reach running with exactly one droplet each, and deleting them must
// still leave nothing behind.
func TestAPIServerRestartMidProvisioning(t *testing.T) {
	const n = 10
	env := testenv.New(t, testenv.Options{CRDs: allCRDs()})
	w := newWorld(t, worldOptions{env: env})
	// Slow creates, so the restart catches some of them in flight and their
	// status writes fail.
	w.do.SetFaults(fakedo.Faults{Rules: map[string]fakedo.FaultRule{
		fakedo.RouteCreateDroplets: {Latency: time.Second, LatencyJitter: 2 * time.Second},
	}})
	dups := w.watchDuplicates(100 * time.Millisecond)
	doEnv := w.standardEnv("restart")
	names := w.createVMs(doEnv, "r", n)

	// Restart once the first create has been applied.
	w.eventually(30*time.Second, "first droplet", func() string {
		if d, _ := w.appliedCreates(); d == 0 {
			return "no droplet yet"
		}
		return ""
	})
	before, _ := w.appliedCreates()
	restart := time.Now()
	if err := env.RestartAPIServer(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Logf("kube-apiserver restarted in %v with %d of %d droplets created", time.Since(restart).Round(time.Millisecond), before, n)
	if before >= n {
		t.Errorf("all creates were done before the restart")
	}

	w.waitRunning(90*time.Second, names...)
	live := w.liveDroplets()
	byVM := perVM(live)
	if len(live) != n || len(byVM) != n {
		t.Errorf("%d droplets for %d VMs' names with %d VMs running, want %d and %d", len(live), len(byVM), n, n, n)
	}
	if d, k := w.appliedCreates(); d != n || k != n {
		t.Errorf("DigitalOcean applied %d droplet and %d key creates, want %d each", d, k, n)
	}

	w.deleteVMs(names...)
	w.waitAllGone(60 * time.Second)
	dups.halt()
	dups.check(t)
}
