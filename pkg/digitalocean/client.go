// Package digitalocean builds godo clients, one rate limiter per token,
// and the services (services.go) every DigitalOcean call goes through; it
// holds the naming, tagging and error rules the controllers share.
package digitalocean

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
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

// CallContext is for one handler pass's DigitalOcean calls: bounded by
// CallTimeout (each call's priority is its service's to mark). Once one of
// them is sent, Clients.Stop waits for the cancel: call it when the
// answers are on record.
func CallContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(parent, CallTimeout)
	c := &call{}
	return context.WithValue(ctx, callKey{}, c), func() { cancel(); c.end() }
}

// Clients hands out one godo client per token. The clients never retry by
// themselves: godo's retry would repeat a POST whose answer was lost and so
// create a second droplet. Retries go through the handlers, which look for
// the existing droplet first.
type Clients struct {
	baseURL string
	limits  LimiterOptions
	mu      sync.Mutex
	byToken map[string]*godo.Client
	// limits are the clients' limiters (none when limiting is off).
	limiters map[*godo.Client]*limiter
	// tagsInUse counts the requests under way that rely on a tag (UseTag).
	tagsInUse map[string]int
	// flight counts every client's requests under way, for Stop.
	flight *inFlight
}

// NewClients returns a client cache for the API at baseURL ("" for
// DigitalOcean's), each token's requests limited as limits say.
func NewClients(baseURL string, limits LimiterOptions) *Clients {
	if baseURL == "" {
		baseURL = DefaultAPIURL
	}
	if !strings.HasSuffix(baseURL, "/") {
		baseURL += "/"
	}
	return &Clients{baseURL: baseURL, limits: limits, byToken: map[string]*godo.Client{}, limiters: map[*godo.Client]*limiter{},
		flight: newInFlight()}
}

// For returns the client for token.
func (c *Clients) For(token string) (*godo.Client, error) {
	key := TokenHash(token)
	c.mu.Lock()
	defer c.mu.Unlock()
	if client, ok := c.byToken[key]; ok {
		return client, nil
	}
	transport := &countingTransport{next: http.DefaultTransport, tokenHash: key, flight: c.flight}
	if !c.limits.Disabled {
		transport.limit = newLimiter(c.limits)
	}
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
	if transport.limit != nil {
		c.limiters[client] = transport.limit
	}
	return client, nil
}

// Load is the largest share of client's rate-limit budget in use, 0 to 1
// (0 when limiting is off).
func (c *Clients) Load(client *godo.Client) float64 {
	if l := c.limiter(client); l != nil {
		return l.load(time.Now())
	}
	return 0
}

func (c *Clients) limiter(client *godo.Client) *limiter {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.limiters[client]
}

// Room is how long until client's limiter would send a request of
// priority p (0: now). A create asks first, so that a request it would
// hold back costs no intent write and no lookup when it is tried again.
func (c *Clients) Room(client *godo.Client, p Priority) time.Duration {
	if l := c.limiter(client); l != nil {
		return l.room(p, time.Now())
	}
	return 0
}

// TokenHash is a short, stable name for a token that is safe to log.
func TokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])[:12]
}

// countingTransport records every DigitalOcean response in the metrics and,
// with a limiter, keeps the token's requests within DigitalOcean's limits.
type countingTransport struct {
	next      http.RoundTripper
	tokenHash string
	limit     *limiter // nil: no limiting
	flight    *inFlight
}

// maxPause bounds how long a Retry-After may silence a token (an hourly
// limit resets within the hour).
const maxPause = time.Hour

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	leave, err := t.flight.enter(req.Context())
	if err != nil {
		closeBody(req)
		return nil, err
	}
	defer leave()
	finish := func(time.Time) {}
	if t.limit != nil {
		p := priorityOf(req)
		reserved, wait := t.limit.reserve(p, time.Now())
		if reserved == nil {
			// Nothing is sent, so nothing is applied: the caller retries later.
			closeBody(req)
			metrics.ObserveHeldBack(p.String(), t.tokenHash)
			return nil, &HeldBackError{Wait: wait, Priority: p}
		}
		finish = reserved
	}
	resp, err := t.send(req)
	now := time.Now()
	finish(now)
	status, remaining := 0, ""
	if resp != nil {
		status, remaining = resp.StatusCode, resp.Header.Get("ratelimit-remaining")
		switch {
		case t.limit == nil:
		case status == http.StatusTooManyRequests:
			// The limit is per token: every other request with it would
			// get a 429 too, and each would still count. (Its headers
			// describe the limit crossed, which Retry-After already covers.)
			t.limit.pause(now, min(retryAfter(resp), maxPause))
		default:
			t.limit.observe(now, resp.Header)
		}
	}
	metrics.ObserveResponse(req.Method, req.URL.Path, status, t.tokenHash, remaining)
	return resp, err
}

// send sends req detached from its caller's cancellation (see detach).
func (t *countingTransport) send(req *http.Request) (*http.Response, error) {
	req, cancel := detach(req)
	resp, err := t.next.RoundTrip(req)
	if resp == nil || resp.Body == nil {
		cancel()
		return resp, err
	}
	resp.Body = cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, err
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// HeldBackError is the limiter's answer to a request it did not send
// because the token's budget (for the request's priority) is spent.
type HeldBackError struct {
	Wait     time.Duration
	Priority Priority
}

// Error is the same for every wait: it ends up in conditions, and a
// message that changed with each try would rewrite the status each time.
func (e *HeldBackError) Error() string {
	return fmt.Sprintf("%s request held back to stay within DigitalOcean's API rate limit", e.Priority)
}
