package scripts

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const (
	// kubeBinDir is where, in the cache, kube-binaries puts the binaries.
	kubeBinDir = "kube-v1.37.2/bin-stamped"
	buildStep  = "building kube-apiserver and kube-controller-manager (one go build)"
	buildLine  = "kube-binaries: " + buildStep
)

// stillBuilding is a progress line of the build step: what, and the time so far.
var stillBuilding = regexp.MustCompile(`(?m)^kube-binaries: still ` + regexp.QuoteMeta(buildStep) + `, \d+m\d\ds elapsed$`)

func TestKubeBinariesReportsProgressAndPrintsOnlyTheBinDir(t *testing.T) {
	t.Parallel()
	f := newFakeEnv(t)
	binDir := filepath.Join(f.cache, kubeBinDir)

	r := f.run(t, "kube-binaries", nil)
	if r.err != nil {
		t.Fatalf("kube-binaries failed: %v", r.err)
	}
	if r.stdout != binDir+"\n" {
		t.Errorf("stdout = %q, want only the bin dir %q", r.stdout, binDir+"\n")
	}
	// The progress lines come while the build runs: after its start, before its end.
	start := strings.Index(r.stderr, buildLine+"\n")
	progress := stillBuilding.FindStringIndex(r.stderr)
	end := strings.LastIndex(r.stderr, ": "+buildStep)
	switch {
	case start < 0:
		t.Errorf("stderr does not announce the build (%q)", buildLine)
	case progress == nil:
		t.Errorf("stderr has no progress line with the elapsed time during the %ss build", slowSeconds)
	case !(start < progress[0] && progress[0] < end):
		t.Errorf("the progress line is not between the build's start and its end")
	}
	if !regexp.MustCompile(`(?m)^kube-binaries: done in \d+m\d\ds: ` + regexp.QuoteMeta(buildStep) + `$`).MatchString(r.stderr) {
		t.Errorf("stderr does not say how long the build took")
	}
	if left := f.leftovers(t); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}

	// Stamped, so the apiserver's /version names the release.
	calls := f.goCalls(t)
	if !strings.Contains(calls, "-X k8s.io/component-base/version.gitVersion=v1.37.2 ") ||
		!strings.Contains(calls, "-X k8s.io/component-base/version.gitMinor=37 ") {
		t.Errorf("go build does not stamp the version v1.37.2:\n%s", calls)
	}

	// Built once: a second run only prints the dir.
	again := f.run(t, "kube-binaries", nil)
	if again.err != nil || again.stdout != binDir+"\n" || again.stderr != "" {
		t.Errorf("second run: err=%v stdout=%q stderr=%q, want the bin dir alone", again.err, again.stdout, again.stderr)
	}
	if f.goCalls(t) != calls {
		t.Errorf("second run called go again")
	}
}

func TestKubeBinariesFailedBuildExitsNonZeroAndStopsItsTicker(t *testing.T) {
	t.Parallel()
	f := newFakeEnv(t)

	r := f.run(t, "kube-binaries", []string{"FAKE_GO_FAIL_BUILD=1"})
	if r.err == nil {
		t.Fatal("kube-binaries succeeded although go build failed")
	}
	if r.stdout != "" {
		t.Errorf("stdout = %q, want nothing: a caller must not get a bin dir", r.stdout)
	}
	if !strings.Contains(r.stderr, "undefined: fakeCompileError") {
		t.Errorf("stderr does not show go's error")
	}
	if !strings.Contains(r.stderr, "kube-binaries: FAILED after ") {
		t.Errorf("stderr does not say the build failed")
	}
	if !stillBuilding.MatchString(r.stderr) {
		t.Errorf("no progress line during the failing build")
	}
	// Checked at once: a ticker that outlived the script would stop by itself only
	// after an interval.
	if left := f.leftovers(t); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
}
