// Package apptest runs the controller in-process for a test.
package apptest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/app"
)

// Start runs the controller until the test ends and returns once its caches
// are synced. The test fails if the controller exits with an error.
func Start(t testing.TB, opts app.Options) {
	t.Helper()
	Run(t, opts)
}

// Run is Start that also returns stop, which stops the controller and
// returns once it exited, as a stopped pod would: a test then sees what is
// left with no controller running. The test's end stops it too.
func Run(t testing.TB, opts app.Options) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	opts.Ready = ready
	exited := make(chan struct{})
	var exitErr error
	go func() {
		exitErr = app.Run(ctx, opts)
		close(exited)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-exited
			if exitErr != nil {
				t.Errorf("controller: %v", exitErr)
			}
		})
	}
	t.Cleanup(stop)
	select {
	case <-ready:
	case <-exited:
		t.Fatalf("controller exited before it was ready: %v", exitErr)
	case <-time.After(60 * time.Second):
		t.Fatal("controller not ready after 60s")
	}
	return stop
}
