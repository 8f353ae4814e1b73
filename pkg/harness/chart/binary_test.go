package chart

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
)

// buildController builds the controller binary into the test's temp dir.
func buildController(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hf-provisioner-digitalocean")
	cmd := exec.Command(goBin(), "build", "-o", bin, "github.com/hobbyfarm/hf-provisioner-digitalocean")
	cmd.Env = append(image.EnvironWithout("CGO_ENABLED="), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestControllerAcceptsChartArgs runs the controller binary with exactly the args the
// chart renders, plus --version (which exits after parsing): an unknown or malformed
// flag makes it exit 2.
func TestControllerAcceptsChartArgs(t *testing.T) {
	bin := buildController(t)
	for name, args := range map[string][]string{
		"defaults": nil,
		"all values": {
			"-f", testdata(t, "all-values.yaml"),
			"--set-json", "extraArgs=[]", // the file's extra flag is a made-up one
		},
		"metrics only":       {"--set", "probes.enabled=false"},
		"probes only":        {"--set", "metrics.enabled=false"},
		"no listener":        {"--set", "metrics.enabled=false,probes.enabled=false"},
		"no leader election": {"--set", "leaderElection.enabled=false,digitalocean.apiURL=http://127.0.0.1:1"},
	} {
		t.Run(name, func(t *testing.T) {
			ms := render(t, release, "team-a", args...)
			var d appsv1.Deployment
			only(t, ms, "Deployment").into(t, &d)
			chartArgs := controller(t, &d).Args
			out, err := exec.Command(bin, append(slices.Clone(chartArgs), "--version")...).CombinedOutput()
			if err != nil {
				first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
				t.Fatalf("controller rejects the chart's args %q: %v: %s", chartArgs, err, first)
			}
			if !strings.Contains(string(out), "hf-provisioner-digitalocean") {
				t.Errorf("--version printed %q", out)
			}
			// The uninstall hook's args: -h after them exits 0 once every one parsed.
			var job batchv1.Job
			onlyHook(t, ms, "Job").into(t, &job)
			drainArgs := job.Spec.Template.Spec.Containers[0].Args
			if out, err := exec.Command(bin, append(slices.Clone(drainArgs), "-h")...).CombinedOutput(); err != nil {
				first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
				t.Errorf("the drain rejects the hook's args %q: %v: %s", drainArgs, err, first)
			}
		})
	}
}
