package e2e

import (
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// metricValue returns the value of the first sample whose line matches pattern.
func metricValue(t *testing.T, body, pattern string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + pattern + ` ([0-9.e+]+)$`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no sample matching %s in:\n%s", pattern, body)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestMetricsAfterALifecycle(t *testing.T) {
	addr := freeAddr(t)
	w := newWorld(t, worldOptions{metricsAddr: addr})
	env := w.standardEnv("do-env")
	names := []string{"m-1", "m-2", "m-3"}
	for _, n := range names {
		w.createVM(n, env, "ubuntu")
	}
	w.waitRunning(names...)

	body := scrape(t, addr)
	if n := metricValue(t, body, `hf_do_requests_total\{code="202",endpoint="POST /v2/droplets"\}`); n < 3 {
		t.Errorf("droplet creates counted %v, want at least 3", n)
	}
	if n := metricValue(t, body, `hf_do_requests_total\{code="201",endpoint="POST /v2/account/keys"\}`); n < 3 {
		t.Errorf("key creates counted %v, want at least 3", n)
	}
	// The registry is the process's: other tests' VMs count too.
	count := metricValue(t, body, `hf_do_provisioning_seconds_count`)
	if count < 3 {
		t.Errorf("provisioning histogram count %v, want at least 3", count)
	}
	if mean := metricValue(t, body, `hf_do_provisioning_seconds_sum`) / count; mean <= 0 || mean > 60 {
		t.Errorf("mean provisioning time %vs is implausible", mean)
	}
	if n := metricValue(t, body, `hf_do_droplets\{status="active"\}`); n != 3 {
		t.Errorf("active droplet gauge %v, want 3", n)
	}
	if r := metricValue(t, body, `hf_do_ratelimit_remaining\{token_hash="[0-9a-f]{12}"\}`); r <= 0 || r >= 5000 {
		t.Errorf("rate-limit remaining %v is implausible", r)
	}
	// Where a slow VM waited: each queue's wait and each handler's run time.
	if n := metricValue(t, body, `workqueue_queue_duration_seconds_count\{name="hobbyfarm.io/v1, Kind=VirtualMachine"\}`); n < 3 {
		t.Errorf("VM queue waits counted %v, want at least 3", n)
	}
	if n := metricValue(t, body, `lasso_controller_reconcile_time_seconds_count\{controller_name="provisioning.hobbyfarm.io/v1alpha1, Resource=droplets",ctx="",handler_name="hf-provisioner-digitalocean-droplet",has_error="false"\}`); n < 3 {
		t.Errorf("Droplet handler runs counted %v, want at least 3", n)
	}

	if err := w.hf.VMs.Delete(w.ns, "m-1", nil); err != nil {
		t.Fatal(err)
	}
	w.eventually(30*time.Second, "deletion observed", func() string {
		body := scrape(t, addr)
		if !regexp.MustCompile(`(?m)^hf_do_deletion_seconds_count [1-9]`).MatchString(body) {
			return "no deletion yet"
		}
		// Deleted VMs wait in their own queue, not the VM queue.
		if !regexp.MustCompile(`(?m)^workqueue_adds_total\{name="vm-cleanup"\} [1-9]`).MatchString(body) {
			return "no VM cleanup queued"
		}
		return ""
	})
}
