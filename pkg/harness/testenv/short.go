package testenv

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

// go test -short is the quick inner loop: unit tests and one smoke test of
// the whole lifecycle. Every other test that needs a control plane is
// skipped: Require and New skip it, so a new one is skipped by default,
// and a test that starts a control plane some other way calls
// SkipUnlessFull. Under -short Main starts no control plane up front; the
// first smoke test's Require does.

var errShort = errors.New("testenv: needs a control plane: skipped under -short (only smoke tests run; drop -short for all)")

var (
	smokeMu    sync.Mutex
	smokeTests = map[string]bool{} // top-level test names
	// deferred is Main's Options under -short, for startDeferred.
	deferred  *Options
	startOnce sync.Once
)

// Smoke marks t (and its subtests) as a smoke test: it runs under -short
// too. Keep smoke tests few: -short must stay quick.
func Smoke(t testing.TB) {
	smokeMu.Lock()
	defer smokeMu.Unlock()
	smokeTests[topLevel(t)] = true
}

// SkipUnlessFull skips t under -short unless Smoke marked it. Require and
// New call it; a test that starts a control plane by other means (a
// program, a playground) calls it first.
func SkipUnlessFull(t testing.TB) {
	t.Helper()
	if !testing.Short() {
		return
	}
	smokeMu.Lock()
	smoke := smokeTests[topLevel(t)]
	smokeMu.Unlock()
	if !smoke {
		t.Skip(errShort)
	}
}

// startDeferred starts the shared Env Main deferred, once.
func startDeferred() {
	startOnce.Do(func() {
		if deferred != nil {
			_ = startShared(*deferred)
		}
	})
}

func topLevel(t testing.TB) string {
	name, _, _ := strings.Cut(t.Name(), "/")
	return name
}
