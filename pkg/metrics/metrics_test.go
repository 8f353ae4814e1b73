package metrics

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestEndpointHidesIDs(t *testing.T) {
	for path, want := range map[string]string{
		"/v2/droplets/12345": "GET /v2/droplets/{id}",
		"/v2/droplets":       "GET /v2/droplets",
		"/v2/account/keys/3b:16:bf:e4:8b:00:8b:b8:59:8c:a9:d3:f0:19:45:fa": "GET /v2/account/keys/{id}",
		"/v2/account/keys": "GET /v2/account/keys",
		"/v2/tags/hfdo-vm:6f1c2a9e-0b7d-4c55-9a3e-2f1d0c9b8a7e/resources": "GET /v2/tags/{tag}/resources",
		"/v2/tags/hfdo-delete:0123456789abcdef":                           "GET /v2/tags/{tag}",
		"/v2/tags":                                                        "GET /v2/tags",
		"/v2/images/ubuntu-22-04-x64":                                     "GET /v2/images/{image}",
		"/v2/droplets/12345/actions/678":                                  "GET /v2/droplets/{id}/actions/{id}",
	} {
		if got := Endpoint("GET", path); got != want {
			t.Errorf("%s → %q, want %q", path, got, want)
		}
	}
}

func TestReadyzTurnsReadyOnlyWhenSet(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	readiness := &Readiness{}
	addr, err := Serve(ctx, "127.0.0.1:0", readiness)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("/healthz %d", code)
	}
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, "caches not synced") {
		t.Errorf("/readyz before ready: %d %q", code, body)
	}
	readiness.SetReady()
	if code, _ := get("/readyz"); code != 200 {
		t.Errorf("/readyz after ready: %d", code)
	}
	ObserveResponse("POST", "/v2/droplets", 202, "abc123", "4999")
	if _, body := get("/metrics"); !strings.Contains(body, `hf_do_requests_total{code="202",endpoint="POST /v2/droplets"}`) ||
		!strings.Contains(body, `hf_do_ratelimit_remaining{token_hash="abc123"} 4999`) {
		t.Errorf("/metrics lacks the request counter or rate-limit gauge:\n%s", body)
	}
}
