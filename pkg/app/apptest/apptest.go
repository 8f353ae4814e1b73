// Package apptest runs the controller in-process for a test.
package apptest

import (
	"context"
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/app"
)

// Start runs the controller until the test ends and returns once its caches
// are synced. The test fails if the controller exits with an error.
func Start(t testing.TB, opts app.Options) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	opts.Ready = ready
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, opts) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("controller: %v", err)
		}
	})
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("controller exited before it was ready: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("controller not ready after 60s")
	}
}
