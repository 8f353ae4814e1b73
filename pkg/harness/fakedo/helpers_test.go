package fakedo

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	"golang.org/x/oauth2"
)

const testToken = "test-token-1"

// startFake starts a server with testToken registered and closes it at the end.
func startFake(t *testing.T, opts Options, acct AccountOptions) *Server {
	t.Helper()
	srv := New(opts)
	if err := srv.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(srv.Close)
	srv.AddAccount(testToken, acct)
	return srv
}

// newClient is the plain, non-retrying godo client the notes recommend.
func newClient(t *testing.T, srv *Server, token string) *godo.Client {
	t.Helper()
	ctx := context.Background()
	c, err := godo.New(oauth2.NewClient(ctx, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token})),
		godo.SetBaseURL(srv.URL()))
	if err != nil {
		t.Fatalf("godo.New: %v", err)
	}
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// wantStatus fails t unless err is DigitalOcean's error answer with status.
func wantStatus(t *testing.T, err error, status int) {
	t.Helper()
	var er *godo.ErrorResponse
	if !errors.As(err, &er) {
		t.Fatalf("want *godo.ErrorResponse with status %d, got %T %v", status, err, err)
	}
	if er.Response.StatusCode != status {
		t.Fatalf("status = %d, want %d (%s)", er.Response.StatusCode, status, er.Message)
	}
}

// apiErr is err as DigitalOcean's error answer with status, or fails t.
func apiErr(t *testing.T, err error, status int) *godo.ErrorResponse {
	t.Helper()
	wantStatus(t, err, status)
	var er *godo.ErrorResponse
	errors.As(err, &er)
	return er
}

func basicCreate(name string) *godo.DropletCreateRequest {
	return &godo.DropletCreateRequest{
		Name: name, Region: "nyc3", Size: "s-1vcpu-1gb",
		Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"},
		Tags:  []string{"hobbyfarm", "env:test"},
	}
}

// manualClock is a settable clock for Options.Now.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func newManualClock() *manualClock {
	return &manualClock{t: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// rawGet does an HTTP GET with an optional bearer token, for checks godo
// hides (exact JSON, missing auth).
func rawGet(t *testing.T, url, token string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}
