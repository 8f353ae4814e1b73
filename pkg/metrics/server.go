package metrics

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/sirupsen/logrus"
)

// Readiness is what /readyz answers; it starts not ready.
type Readiness struct {
	ready atomic.Bool
	// Check, if set, is consulted while not ready (e.g. a standby replica that
	// sees a leader holding the lease is ready).
	Check func(context.Context) error
}

// SetReady marks the process ready.
func (r *Readiness) SetReady() { r.ready.Store(true) }

func (r *Readiness) err(ctx context.Context) error {
	if r.ready.Load() {
		return nil
	}
	if r.Check != nil {
		return r.Check(ctx)
	}
	return errors.New("caches not synced yet")
}

// Serve runs the metrics and health endpoints on addr until ctx ends.
// It returns the bound address (addr may use port 0) once listening.
func Serve(ctx context.Context, addr string, readiness *Readiness) (string, error) {
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := readiness.err(r.Context()); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = server.Shutdown(shutdown)
	}()
	go func() {
		if err := server.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logrus.WithError(err).Error("metrics server stopped")
		}
	}()
	return listener.Addr().String(), nil
}
