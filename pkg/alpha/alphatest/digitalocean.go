package alphatest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// godoUserAgent is what the alpha's godo 1.99 client sent.
const godoUserAgent = "godo/1.99.0"

// doAPI makes the alpha's DigitalOcean calls, one HTTP request each (godo
// 1.99 retries nothing), against a DigitalOcean API such as the fake.
type doAPI struct {
	baseURL string // ends in "/"
	token   string
}

func newDOAPI(baseURL, token string) doAPI {
	if !strings.HasSuffix(baseURL, "/") {
		baseURL += "/"
	}
	return doAPI{baseURL: baseURL, token: token}
}

// createKey is the alpha's Keys.Create.
func (a doAPI) createKey(ctx context.Context, req keyCreateRequest) (doKey, error) {
	var out struct {
		SSHKey doKey `json:"ssh_key"`
	}
	err := a.call(ctx, http.MethodPost, "v2/account/keys", req, &out)
	return out.SSHKey, err
}

// createDroplet is the alpha's Droplets.Create.
func (a doAPI) createDroplet(ctx context.Context, req dropletCreateRequest) (doDroplet, error) {
	var out struct {
		Droplet doDroplet `json:"droplet"`
	}
	err := a.call(ctx, http.MethodPost, "v2/droplets", req, &out)
	return out.Droplet, err
}

// getDroplet is the alpha's Droplets.Get, which it repeated while a
// droplet was new.
func (a doAPI) getDroplet(ctx context.Context, id int) (doDroplet, error) {
	var out struct {
		Droplet doDroplet `json:"droplet"`
	}
	err := a.call(ctx, http.MethodGet, "v2/droplets/"+strconv.Itoa(id), nil, &out)
	return out.Droplet, err
}

// waitActive reads the droplet until DigitalOcean reports it active with
// a public address: the last state the alpha recorded of a running VM.
func (a doAPI) waitActive(ctx context.Context, id int) (doDroplet, error) {
	var last doDroplet
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true,
		func(ctx context.Context) (bool, error) {
			d, err := a.getDroplet(ctx, id)
			if err != nil {
				return false, err
			}
			last = d
			return d.Status == "active" && d.ipv4("public") != "", nil
		})
	if err != nil {
		return last, fmt.Errorf("droplet %d not active (last status %q): %w", id, last.Status, err)
	}
	return last, nil
}

func (a doAPI) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.baseURL+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", godoUserAgent)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(data))
	}
	return json.Unmarshal(data, out)
}
