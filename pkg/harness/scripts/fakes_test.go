package scripts

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeGo answers the go commands the scripts run. It logs each call to
// $FAKE_GO_LOG, and the slow ones (build, install) take $FAKE_GO_SLEEP seconds.
const fakeGo = `#!/usr/bin/env bash
set -euo pipefail
echo "go $*" >>"$FAKE_GO_LOG"
case "$1" in
env) echo "$FAKE_GOPATH" ;;
mod) # go mod download -json k8s.io/kubernetes@VERSION
  mod="$FAKE_GOPATH/kubernetes.mod"
  mkdir -p "$FAKE_GOPATH"
  printf 'module k8s.io/kubernetes\n\ngo 1.26.0\n\nreplace (\n\tk8s.io/api => ./staging/src/k8s.io/api\n)\n' >"$mod"
  printf '{\n\t"Path": "k8s.io/kubernetes",\n\t"Version": "%s",\n\t"GoMod": "%s"\n}\n' "${4#*@}" "$mod"
  ;;
list) ;;
build)
  sleep "$FAKE_GO_SLEEP"
  if [[ -n ${FAKE_GO_FAIL_BUILD:-} ]]; then
    echo "k8s.io/kubernetes/pkg/fake: undefined: fakeCompileError" >&2
    exit 1
  fi
  while [[ $1 != -o ]]; do shift; done
  for b in kube-apiserver kube-controller-manager; do printf '#!/bin/sh\n' >"$2/$b"; chmod +x "$2/$b"; done
  ;;
install) # go install example.com/cmd/NAME@VERSION installs NAME
  sleep "$FAKE_GO_SLEEP"
  name=${2%@*} && name=${name##*/}
  mkdir -p "$FAKE_GOPATH/bin" && printf '#!/bin/sh\n' >"$FAKE_GOPATH/bin/$name" && chmod +x "$FAKE_GOPATH/bin/$name"
  ;;
*) echo "fake go: unexpected: go $*" >&2; exit 2 ;;
esac
`

// fakeEnv is a throwaway machine for one script run: fakes first on PATH, an empty
// cache and GOPATH, progress every second, and a marker that every process the
// script starts inherits, so that leftovers can be found.
type fakeEnv struct {
	dir, cache, gopath, goLog, marker string
	env                               []string
}

// slowSeconds is how long the fake's slow steps take: a few progress intervals.
const slowSeconds = "3"

func newFakeEnv(t *testing.T) *fakeEnv {
	t.Helper()
	dir := t.TempDir()
	f := &fakeEnv{
		dir:    dir,
		cache:  filepath.Join(dir, "cache"),
		gopath: filepath.Join(dir, "gopath"),
		goLog:  filepath.Join(dir, "go.log"),
		marker: fmt.Sprintf("%s-%d", t.Name(), os.Getpid()),
	}
	bin := filepath.Join(dir, "bin")
	for name, body := range map[string]string{
		"go":      fakeGo,
		"etcd":    "#!/bin/sh\n",
		"kubectl": "#!/bin/sh\n",
	} {
		writeExecutable(t, filepath.Join(bin, name), body)
	}
	path := bin + ":/usr/bin:/bin"
	for _, tool := range []string{"helm", "actionlint", "golangci-lint"} {
		if p, err := lookPathIn(tool, path); err == nil {
			t.Fatalf("a %s at %s is on the test PATH; the tests need a machine without it there", tool, p)
		}
	}
	f.env = []string{
		"PATH=" + path,
		"HOME=" + filepath.Join(dir, "home"),
		"HF_TEST_CACHE=" + f.cache,
		"HF_PROGRESS_INTERVAL=1s",
		"FAKE_GO_LOG=" + f.goLog,
		"FAKE_GOPATH=" + f.gopath,
		"FAKE_GO_SLEEP=" + slowSeconds,
		"HF_SCRIPTS_TEST_MARKER=" + f.marker,
	}
	return f
}

// result is what one run of a script gave.
type result struct {
	stdout, stderr string
	err            error
}

// run runs scripts/<name> with the fake environment plus extra variables.
func (f *fakeEnv) run(t *testing.T, name string, extraEnv []string, args ...string) result {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(root, "scripts", name), args...)
	cmd.Dir = root
	cmd.Env = append(append([]string{}, f.env...), extraEnv...)
	// Files, not pipes: Run would wait for a pipe's last writer, so a leftover ticker
	// holding stderr would be waited for instead of found.
	stdout, stderr := f.outputFile(t, "stdout"), f.outputFile(t, "stderr")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	r := result{stdout: readOutput(t, stdout), stderr: readOutput(t, stderr), err: err}
	t.Logf("scripts/%s %s: err=%v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, r.stdout, r.stderr)
	return r
}

func (f *fakeEnv) outputFile(t *testing.T, name string) *os.File {
	t.Helper()
	file, err := os.CreateTemp(f.dir, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { file.Close() })
	return file
}

func readOutput(t *testing.T, file *os.File) string {
	t.Helper()
	data, err := os.ReadFile(file.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// goCalls is the fake go's log: one "go <args>" line per call.
func (f *fakeEnv) goCalls(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(f.goLog)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(data)
}

// leftovers lists the processes still alive that a script run started: they carry
// the marker in their environment. Zombies have an empty environ, so they do not count.
func (f *fakeEnv) leftovers(t *testing.T) []string {
	t.Helper()
	want := []byte("HF_SCRIPTS_TEST_MARKER=" + f.marker + "\x00")
	environs, err := filepath.Glob("/proc/[0-9]*/environ")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, p := range environs {
		data, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(data, want) {
			continue // gone already, or not ours
		}
		cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "cmdline"))
		found = append(found, filepath.Base(filepath.Dir(p))+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return found
}

func writeExecutable(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// lookPathIn is exec.LookPath over the given PATH instead of this process's.
func lookPathIn(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not in %s", name, path)
}
