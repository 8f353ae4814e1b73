// Package digitalocean builds godo clients and holds the naming, tagging and
// error rules the controllers share.
package digitalocean

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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

// Clients hands out one godo client per token. The clients never retry by
// themselves: godo's retry would repeat a POST whose answer was lost and so
// create a second droplet. Retries go through the handlers, which look for
// the existing droplet first.
type Clients struct {
	baseURL string
	mu      sync.Mutex
	byToken map[string]*godo.Client
}

// NewClients returns a client cache for the API at baseURL ("" for DigitalOcean's).
func NewClients(baseURL string) *Clients {
	if baseURL == "" {
		baseURL = DefaultAPIURL
	}
	if !strings.HasSuffix(baseURL, "/") {
		baseURL += "/"
	}
	return &Clients{baseURL: baseURL, byToken: map[string]*godo.Client{}}
}

// For returns the client for token.
func (c *Clients) For(token string) (*godo.Client, error) {
	key := TokenHash(token)
	c.mu.Lock()
	defer c.mu.Unlock()
	if client, ok := c.byToken[key]; ok {
		return client, nil
	}
	counted := &http.Client{Timeout: CallTimeout, Transport: &countingTransport{next: http.DefaultTransport, tokenHash: key}}
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

// countingTransport records every DigitalOcean response in the metrics.
type countingTransport struct {
	next      http.RoundTripper
	tokenHash string
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	status, remaining := 0, ""
	if resp != nil {
		status, remaining = resp.StatusCode, resp.Header.Get("ratelimit-remaining")
	}
	metrics.ObserveResponse(req.Method, req.URL.Path, status, t.tokenHash, remaining)
	return resp, err
}
