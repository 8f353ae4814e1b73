package testenv

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"
)

// SkipEnvVar set to "1" skips integration tests instead of failing them when no
// control plane can be started.
const SkipEnvVar = "HF_SKIP_INTEGRATION"

var (
	shared    *Env
	sharedErr = errors.New("testenv: no shared Env: call testenv.Main(m, opts) from TestMain")
	errSkip   = errors.New("testenv: integration tests skipped (" + SkipEnvVar + "=1)")
)

// Main is for TestMain: it starts one Env for the whole test package, runs the tests,
// stops the Env and exits. If the Env cannot start, the tests still run (so those
// that need no cluster report normally) but the package fails, and tests calling
// Require fail with the cause. Failed runs keep Env.Dir for its logs.
//
//	func TestMain(m *testing.M) { testenv.Main(m, testenv.Options{CRDs: testenv.HobbyFarmCRDs()}) }
func Main(m *testing.M, opts Options) {
	os.Exit(runMain(m, opts))
}

func runMain(m *testing.M, opts Options) int {
	if !flag.Parsed() {
		flag.Parse()
	}
	if skipIntegration() {
		sharedErr = errSkip
		return m.Run()
	}
	begin := time.Now()
	env, err := Start(context.Background(), opts)
	if err != nil {
		sharedErr = err
		fmt.Fprintf(os.Stderr, "testenv: FAIL: cannot start the control plane (%s=1 skips integration tests):\n%v\n", SkipEnvVar, err)
		m.Run()
		return 1
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "testenv: control plane ready in %s at %s (dir %s)\n",
			time.Since(begin).Round(time.Millisecond), env.host, env.Dir)
	}
	shared, sharedErr = env, nil
	code := m.Run()
	if code != 0 {
		env.keepLogsOnStop()
		fmt.Fprintf(os.Stderr, "testenv: tests failed; logs and kubeconfig kept in %s\n", env.Dir)
	}
	if err := env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: stop: %v\n", err)
	}
	return code
}

// Shared is the Env started by Main, or nil if it is not running.
func Shared() *Env {
	return shared
}

// Require returns the shared Env, failing the test with the start error if there is
// none, or skipping it if HF_SKIP_INTEGRATION=1.
func Require(t testing.TB) *Env {
	t.Helper()
	if shared != nil {
		return shared
	}
	if errors.Is(sharedErr, errSkip) {
		t.Skip(sharedErr)
	}
	t.Fatal(sharedErr)
	return nil
}

// New starts a private Env for one test and stops it on cleanup, for tests that would
// disturb others (e.g. restarting the apiserver while tests run in parallel).
// It skips or fails like Require.
func New(t testing.TB, opts Options) *Env {
	t.Helper()
	if skipIntegration() {
		t.Skip(errSkip)
	}
	env, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			env.keepLogsOnStop()
			t.Logf("testenv: logs kept in %s", env.Dir)
		}
		if err := env.Stop(); err != nil {
			t.Errorf("testenv: stop: %v", err)
		}
	})
	return env
}

func skipIntegration() bool {
	return os.Getenv(SkipEnvVar) == "1"
}
