package reliability

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeProxy stands between a controller process and kube-apiserver, so a
// crash test can stop the controller between two of its Kubernetes writes,
// as fake.Hold does between DigitalOcean requests: a hold before apply keeps
// a write from reaching the apiserver (the killed client's write is never
// made), a hold after apply lets it commit and keeps the answer back (the
// client never hears of it). Everything else, watches included, streams
// through unchanged.
type kubeProxy struct {
	t          *testing.T
	kubeconfig string // for the controller: plain HTTP to the proxy, no credentials
	transport  http.RoundTripper
	target     *url.URL
	stream     *httputil.ReverseProxy

	mu    sync.Mutex
	holds []*kubeHold
}

// kubeRequest is what a hold's match sees of a request.
type kubeRequest struct {
	Method string
	Path   string
	Body   []byte
}

// kubeHold stops the requests its match accepts until released.
type kubeHold struct {
	match      func(r kubeRequest) bool
	afterApply bool

	reachedOnce, releaseOnce sync.Once
	reached, released        chan struct{}
}

func (h *kubeHold) Reached() <-chan struct{} { return h.reached }

func (h *kubeHold) Release() { h.releaseOnce.Do(func() { close(h.released) }) }

// newKubeProxy starts a proxy to cfg's apiserver, authenticating as cfg,
// until the test ends.
func newKubeProxy(t *testing.T, cfg *rest.Config) *kubeProxy {
	t.Helper()
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	p := &kubeProxy{t: t, transport: transport, target: target}
	p.stream = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = target.Host
		},
		Transport:     transport,
		FlushInterval: -1, // watches
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)

	kc := clientcmdapi.NewConfig()
	kc.Clusters["proxy"] = &clientcmdapi.Cluster{Server: srv.URL}
	kc.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{}
	kc.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy"}
	kc.CurrentContext = "proxy"
	p.kubeconfig = filepath.Join(t.TempDir(), "kubeconfig-proxy")
	if err := clientcmd.WriteToFile(*kc, p.kubeconfig); err != nil {
		t.Fatal(err)
	}
	return p
}

// holdBeforeApply holds every request match accepts before it reaches the apiserver.
func (p *kubeProxy) holdBeforeApply(match func(r kubeRequest) bool) *kubeHold {
	return p.add(match, false)
}

// holdAfterApply lets the requests match accepts commit and holds their answers.
func (p *kubeProxy) holdAfterApply(match func(r kubeRequest) bool) *kubeHold {
	return p.add(match, true)
}

func (p *kubeProxy) add(match func(r kubeRequest) bool, after bool) *kubeHold {
	h := &kubeHold{match: match, afterApply: after, reached: make(chan struct{}), released: make(chan struct{})}
	p.mu.Lock()
	p.holds = append(p.holds, h)
	p.mu.Unlock()
	p.t.Cleanup(h.Release)
	return h
}

// matching is the first unreleased hold that accepts r.
func (p *kubeProxy) matching(r kubeRequest) *kubeHold {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, h := range p.holds {
		select {
		case <-h.released:
			continue
		default:
		}
		if h.match(r) {
			return h
		}
	}
	return nil
}

func (p *kubeProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		p.stream.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req := kubeRequest{Method: r.Method, Path: r.URL.Path, Body: body}
	h := p.matching(req)
	if h != nil && !h.afterApply && !h.wait(r) {
		return // the client went away: nothing was applied
	}
	out := r.Clone(r.Context())
	out.URL.Scheme, out.URL.Host, out.Host = p.target.Scheme, p.target.Host, p.target.Host
	out.RequestURI = ""
	out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	resp, err := p.transport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if h != nil && h.afterApply && !h.wait(r) {
		return // applied, and the client never hears of it
	}
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)
}

// wait blocks until h is released (true) or the client goes away (false).
func (h *kubeHold) wait(r *http.Request) bool {
	h.reachedOnce.Do(func() { close(h.reached) })
	select {
	case <-h.released:
		return true
	case <-r.Context().Done():
		return false
	}
}

// Matchers for the provisioner's objects, by the URL path the clients use:
// /apis/<group>/<version>/namespaces/<ns>/<resource>/<name>[/status].

// objectPath splits a namespaced object's path into resource, name and
// subresource; ok is false for anything else (collections, other shapes).
func objectPath(path string) (resource, name, sub string, ok bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	i := -1
	for j, p := range parts {
		if p == "namespaces" {
			i = j
			break
		}
	}
	if i < 0 || len(parts) < i+4 {
		return "", "", "", false
	}
	rest := parts[i+2:]
	resource, name = rest[0], rest[1]
	if len(rest) > 2 {
		sub = rest[2]
	}
	return resource, name, sub, true
}
