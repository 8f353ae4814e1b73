package scripts

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const (
	helmInstall       = "go install helm.sh/helm/v3/cmd/helm@v3.22.0"
	actionlintInstall = "go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12"
	golangciInstall   = "go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0"
)

// withBuiltKubeBinaries puts the kube binaries in the fake cache, as a previous
// run would have, so prereqs' last step is quick.
func withBuiltKubeBinaries(t *testing.T, f *fakeEnv) {
	t.Helper()
	for _, b := range []string{"kube-apiserver", "kube-controller-manager"} {
		writeExecutable(t, filepath.Join(f.cache, kubeBinDir, b), "#!/bin/sh\n")
	}
}

func TestPrereqsForThePlaygroundSkipsHelmAndTheLinters(t *testing.T) {
	t.Parallel()
	f := newFakeEnv(t)
	withBuiltKubeBinaries(t, f)

	r := f.run(t, "prereqs", nil, "playground")
	if r.err != nil {
		t.Fatalf("prereqs playground failed: %v", r.err)
	}
	if calls := f.goCalls(t); strings.Contains(calls, "install") {
		t.Errorf("prereqs playground installed something with go:\n%s", calls)
	}
	for _, tool := range []string{"helm", "actionlint", "golangci-lint"} {
		if !strings.Contains(r.stderr, "prereqs: "+tool+" skipped") {
			t.Errorf("stderr does not say %s was skipped", tool)
		}
	}
	if !strings.Contains(r.stderr, "prereqs: kube-apiserver, kube-controller-manager: "+filepath.Join(f.cache, kubeBinDir)) {
		t.Errorf("stderr does not name the kube binaries' dir")
	}
}

func TestPrereqsInstallsHelmAndTheLintersWithProgress(t *testing.T) {
	t.Parallel()
	f := newFakeEnv(t)
	withBuiltKubeBinaries(t, f)

	r := f.run(t, "prereqs", nil)
	if r.err != nil {
		t.Fatalf("prereqs failed: %v", r.err)
	}
	for tool, install := range map[string]string{"helm": helmInstall, "actionlint": actionlintInstall, "golangci-lint": golangciInstall} {
		if calls := f.goCalls(t); !strings.Contains(calls, install) {
			t.Errorf("prereqs did not run %q; go calls:\n%s", install, calls)
		}
		if _, err := os.Stat(filepath.Join(f.gopath, "bin", tool)); err != nil {
			t.Errorf("no %s installed: %v", tool, err)
		}
	}
	if !regexp.MustCompile(`(?m)^prereqs: still installing helm v3\.22\.0 .*, \d+m\d\ds elapsed$`).MatchString(r.stderr) {
		t.Errorf("stderr has no progress line with the elapsed time during the %ss helm install", slowSeconds)
	}
	if left := f.leftovers(t); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
}

func TestPrereqsRejectsAnUnknownArgument(t *testing.T) {
	t.Parallel()
	f := newFakeEnv(t)

	r := f.run(t, "prereqs", nil, "playgrond")
	if r.err == nil || !strings.Contains(r.stderr, "usage: scripts/prereqs [all|playground]") {
		t.Errorf("prereqs playgrond: err=%v, want a failure with the usage", r.err)
	}
	if calls := f.goCalls(t); calls != "" {
		t.Errorf("prereqs ran go before checking its argument:\n%s", calls)
	}
}
