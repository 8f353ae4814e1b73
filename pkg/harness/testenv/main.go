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
	errNoMain = errors.New("testenv: no shared Env: call testenv.Main(m, opts) from TestMain")
	errSkip   = errors.New("testenv: integration tests skipped (" + SkipEnvVar + "=1)")
)

// shared is the package's Env; whyNoShared says why there is none.
var (
	shared      *Env
	whyNoShared = errNoMain
)

// Main is for TestMain: it starts one Env for the whole test package, runs the tests,
// stops the Env and exits. If the Env cannot start, the tests still run (so those
// that need no cluster report normally) but the package fails, and tests calling
// Require fail with the cause. Failed runs keep Env.Dir for its logs. Under
// -short it starts the Env only for a smoke test (see Smoke).
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
		whyNoShared = errSkip
		return m.Run()
	}
	if testing.Short() {
		// Only a smoke test needs the control plane: Require starts it for
		// the first one, and never when none is selected.
		deferred, whyNoShared = &opts, errShort
		return stopShared(m.Run())
	}
	if err := startShared(opts); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: FAIL: cannot start the control plane (%s=1 skips integration tests):\n%v\n", SkipEnvVar, err)
		m.Run()
		return 1
	}
	return stopShared(m.Run())
}

// startShared starts the package's shared Env.
func startShared(opts Options) error {
	begin := time.Now()
	env, err := Start(context.Background(), opts)
	if err != nil {
		whyNoShared = err
		return err
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "testenv: control plane ready in %s at %s (dir %s)\n",
			time.Since(begin).Round(time.Millisecond), env.host, env.Dir)
	}
	shared, whyNoShared = env, nil
	return nil
}

// stopShared stops the shared Env, if one was started, keeping its logs
// when the tests failed (code != 0); it returns code.
func stopShared(code int) int {
	if shared == nil {
		return code
	}
	if code != 0 {
		shared.keepLogsOnStop()
		fmt.Fprintf(os.Stderr, "testenv: tests failed; logs and kubeconfig kept in %s\n", shared.Dir)
	}
	if err := shared.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: stop: %v\n", err)
	}
	return code
}

// Shared is the Env started by Main, or nil if it is not running.
func Shared() *Env {
	return shared
}

// Require returns the shared Env, failing the test with the start error if there is
// none, or skipping it if HF_SKIP_INTEGRATION=1. Under -short it skips the test
// unless Smoke marked it, and starts the shared Env for the first that is.
func Require(t testing.TB) *Env {
	t.Helper()
	SkipUnlessFull(t)
	if testing.Short() {
		startDeferred()
	}
	if shared != nil {
		return shared
	}
	if errors.Is(whyNoShared, errSkip) {
		t.Skip(whyNoShared)
	}
	t.Fatal(whyNoShared)
	return nil
}

// New starts a private Env for one test and stops it on cleanup, for tests that would
// disturb others (e.g. restarting the apiserver while tests run in parallel).
// It skips (under -short too) or fails like Require.
func New(t testing.TB, opts Options) *Env {
	t.Helper()
	if skipIntegration() {
		t.Skip(errSkip)
	}
	SkipUnlessFull(t)
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
