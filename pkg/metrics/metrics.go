// Package metrics holds the controller's Prometheus metrics and its
// /metrics, /healthz and /readyz endpoints.
package metrics

import (
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	lassometrics "github.com/rancher/lasso/pkg/metrics"
)

// Registry holds only this controller's metrics plus the Go runtime's.
var Registry = prometheus.NewRegistry()

var (
	// DORequests counts DigitalOcean API calls by endpoint pattern and status code.
	DORequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hf_do_requests_total",
		Help: "DigitalOcean API requests by endpoint and HTTP status code (\"error\" when no response came).",
	}, []string{"endpoint", "code"})
	// RateLimitRemaining is DigitalOcean's ratelimit-remaining, per token hash (never the token).
	RateLimitRemaining = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "hf_do_ratelimit_remaining",
		Help: "DigitalOcean's last reported ratelimit-remaining, by a short hash of the token.",
	}, []string{"token_hash"})
	// HeldBack counts requests the client-side limiter did not send, by priority.
	HeldBack = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hf_do_requests_held_back_total",
		Help: "DigitalOcean API requests not sent to stay within the token's rate limit, by priority (delete, create, pool, resync, catalog, tidy).",
	}, []string{"priority", "token_hash"})
	// ProvisioningSeconds is the time from a VM's creation to it running.
	ProvisioningSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "hf_do_provisioning_seconds",
		Help:    "Seconds from a VM's creation to its status becoming running.",
		Buckets: []float64{1, 2, 5, 10, 20, 30, 60, 120, 300, 600},
	})
	// DeletionSeconds is the time from a Droplet's deletion to DigitalOcean confirming it gone.
	DeletionSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "hf_do_deletion_seconds",
		Help:    "Seconds from a Droplet's deletion to DigitalOcean confirming the droplet gone.",
		Buckets: []float64{0.5, 1, 2, 5, 10, 30, 60, 300},
	})
	// OrphansSwept counts droplets and keys deleted because their VM was gone.
	OrphansSwept = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hf_do_orphans_swept_total",
		Help: "Droplets and SSH keys deleted by the orphan sweep, by kind.",
	}, []string{"kind"})
	// TagsDeleted counts our tags deleted once nothing carried or needed them.
	TagsDeleted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hf_do_tags_deleted_total",
		Help: "Tags of ours (a VM's, a multi-create's, a boot bucket's, a warm pool's, a batched delete's) deleted from DigitalOcean once nothing carried or needed them.",
	})
	// AccountDropletLimit and AccountDroplets are each token's account's
	// droplet limit and the droplets it holds (every installation's), as the
	// Environment check last read them; by token hash, never the token.
	AccountDropletLimit = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "hf_do_account_droplet_limit",
		Help: "The droplet limit of each token's DigitalOcean account, by a short hash of the token.",
	}, []string{"token_hash"})
	AccountDroplets = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "hf_do_account_droplets",
		Help: "The droplets each token's DigitalOcean account holds (every installation's and any others: they share its limit), by a short hash of the token.",
	}, []string{"token_hash"})
	// ReconcileErrors counts failed reconciles by condition reason.
	ReconcileErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hf_do_reconcile_errors_total",
		Help: "Reconciles that ended in an error condition, by object kind and reason.",
	}, []string{"kind", "reason"})
)

func init() {
	Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		DORequests, HeldBack, RateLimitRemaining, ProvisioningSeconds, DeletionSeconds, ReconcileErrors, OrphansSwept, TagsDeleted, AccountDropletLimit, AccountDroplets, droplets)
	// Each controller's queue depth and wait, and each handler's run time
	// and count: where a slow VM waited. Before any queue exists, since
	// client-go's workqueue takes its metrics provider at creation.
	lassometrics.MustRegisterWithWorkqueue(Registry)
}

var idSegment = regexp.MustCompile(`^([0-9]+|[0-9a-f]{2}(:[0-9a-f]{2})+)$`)

// namedAfter are DigitalOcean's collections whose next path segment names
// one member, with the placeholder that replaces it: a tag's name carries
// a VM's UID or a batch's random part, and would make a series per VM.
var namedAfter = map[string]string{"droplets": "{id}", "keys": "{id}", "actions": "{id}", "tags": "{tag}", "images": "{image}"}

// Endpoint turns a request into a low-cardinality label, the path's
// template: member names, ids and fingerprints become placeholders.
func Endpoint(method, path string) string {
	segments := strings.Split(path, "/")
	for i, seg := range segments {
		if placeholder, ok := namedAfter[segments[max(i-1, 0)]]; ok && i > 0 && seg != "" {
			segments[i] = placeholder
		} else if idSegment.MatchString(seg) {
			segments[i] = "{id}"
		}
	}
	return method + " " + strings.Join(segments, "/")
}

// DropletsByStatus makes hf_do_droplets{status} come from count, read at
// scrape time. The last call wins (tests run the controller several times).
func DropletsByStatus(count func() map[string]int) {
	droplets.count.Store(&count)
}

var droplets = &dropletCollector{}

var dropletsDesc = prometheus.NewDesc("hf_do_droplets", "Droplet objects by DigitalOcean status (\"pending\" before creation).", []string{"status"}, nil)

type dropletCollector struct {
	count atomic.Pointer[func() map[string]int]
}

func (c *dropletCollector) Describe(ch chan<- *prometheus.Desc) { ch <- dropletsDesc }

func (c *dropletCollector) Collect(ch chan<- prometheus.Metric) {
	count := c.count.Load()
	if count == nil {
		return
	}
	for status, n := range (*count)() {
		ch <- prometheus.MustNewConstMetric(dropletsDesc, prometheus.GaugeValue, float64(n), status)
	}
}

// ObserveResponse records one DigitalOcean response (status 0 when none came).
func ObserveResponse(method, path string, status int, tokenHash, remaining string) {
	code := "error"
	if status != 0 {
		code = strconv.Itoa(status)
	}
	DORequests.WithLabelValues(Endpoint(method, path), code).Inc()
	if v, err := strconv.ParseFloat(remaining, 64); err == nil {
		RateLimitRemaining.WithLabelValues(tokenHash).Set(v)
	}
}

// ObserveHeldBack counts a request the limiter kept back.
func ObserveHeldBack(priority, tokenHash string) {
	HeldBack.WithLabelValues(priority, tokenHash).Inc()
}
