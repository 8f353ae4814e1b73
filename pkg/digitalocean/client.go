// Package digitalocean builds godo clients and holds the naming, tagging and
// error rules the controllers share.
package digitalocean

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/digitalocean/godo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	"golang.org/x/oauth2"
)

// DefaultAPIURL is DigitalOcean's public API.
const DefaultAPIURL = "https://api.digitalocean.com/"

// CallTimeout bounds every DigitalOcean call made from a handler.
const CallTimeout = 30 * time.Second

// Clients hands out one godo client per token. The clients never retry by
// themselves: godo's retry would repeat a POST whose answer was lost and so
// create a second droplet. Retries go through the handlers, which look for
// the existing droplet first.
type Clients struct {
	baseURL string
	mu      sync.Mutex
	byToken map[string]*godo.Client
	limits  []RateLimit
}

// NewClients returns a client cache for the API at baseURL ("" for DigitalOcean's).
func NewClients(baseURL string) *Clients {
	if baseURL == "" {
		baseURL = DefaultAPIURL
	}
	if !strings.HasSuffix(baseURL, "/") {
		baseURL += "/"
	}
	return &Clients{baseURL: baseURL, byToken: map[string]*godo.Client{}, limits: append([]RateLimit(nil), RateLimits...)}
}

// For returns the client for token.
func (c *Clients) For(token string) (*godo.Client, error) {
	key := TokenHash(token)
	c.mu.Lock()
	defer c.mu.Unlock()
	if client, ok := c.byToken[key]; ok {
		return client, nil
	}
	transport := &countingTransport{next: http.DefaultTransport, tokenHash: key, pace: newPacer(c.limits)}
	counted := &http.Client{Timeout: CallTimeout, Transport: transport}
	httpClient := oauth2.NewClient(
		context.WithValue(context.Background(), oauth2.HTTPClient, counted),
		oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token}),
	)
	client, err := godo.New(httpClient, godo.SetBaseURL(c.baseURL), godo.SetUserAgent("hf-provisioner-digitalocean"))
	if err != nil {
		return nil, err
	}
	c.byToken[key] = client
	return client, nil
}

// TokenHash is a short, stable name for a token that is safe to log.
func TokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])[:12]
}

// countingTransport records every DigitalOcean response in the metrics and
// keeps the token's requests within DigitalOcean's rate limits.
type countingTransport struct {
	next      http.RoundTripper
	tokenHash string
	pace      *pacer

	mu          sync.Mutex
	pausedUntil time.Time
}

// maxPause bounds how long a Retry-After may silence a token (an hourly
// limit resets within the hour).
const maxPause = time.Hour

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var finish func(time.Time)
	for finish == nil {
		// The limit is per token: once DigitalOcean says 429, every other
		// object's request with the same token would get a 429 too, and each
		// of those still counts against the window that follows. Answer them
		// here until the Retry-After has passed; nothing is sent, so nothing
		// is applied.
		if wait := t.paused(); wait > 0 {
			return heldBack(req, wait, "DigitalOcean API rate limit exceeded; requests with this token held back until it resets")
		}
		var wait time.Duration
		if finish, wait = t.pace.reserve(time.Now()); finish != nil {
			break
		}
		if deadline, ok := req.Context().Deadline(); wait > maxPaceWait || (ok && time.Until(deadline) < wait) {
			return heldBack(req, wait, "request held back to stay within DigitalOcean's API rate limit")
		}
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-req.Context().Done():
			timer.Stop()
			closeBody(req)
			return nil, req.Context().Err()
		}
	}
	resp, err := t.next.RoundTrip(req)
	finish(time.Now())
	status, remaining := 0, ""
	if resp != nil {
		status, remaining = resp.StatusCode, resp.Header.Get("ratelimit-remaining")
		if status == http.StatusTooManyRequests {
			t.pause(min(retryAfter(resp), maxPause))
		}
	}
	metrics.ObserveResponse(req.Method, req.URL.Path, status, t.tokenHash, remaining)
	return resp, err
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

func (t *countingTransport) paused() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return time.Until(t.pausedUntil)
}

func (t *countingTransport) pause(d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if until := time.Now().Add(d); until.After(t.pausedUntil) {
		t.pausedUntil = until
	}
}

// heldBack is the 429 DigitalOcean would have sent, made locally without
// sending req. godo turns it into the usual *godo.ErrorResponse, so the
// handlers re-queue after its Retry-After as for DigitalOcean's own.
func heldBack(req *http.Request, wait time.Duration, message string) (*http.Response, error) {
	closeBody(req)
	body := `{"id":"too_many_requests","message":"` + message + `"}`
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
	return &http.Response{
		Status: "429 Too Many Requests", StatusCode: http.StatusTooManyRequests,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)),
		Request: req,
	}, nil
}
