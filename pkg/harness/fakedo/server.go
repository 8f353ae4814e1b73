package fakedo

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Route patterns, as used in RequestRecord.Pattern, RequestCounts keys and
// Faults.Rules keys.
const (
	RouteCreateDroplets      = "POST /v2/droplets"
	RouteListDroplets        = "GET /v2/droplets"
	RouteGetDroplet          = "GET /v2/droplets/{id}"
	RouteDeleteDroplet       = "DELETE /v2/droplets/{id}"
	RouteDeleteDropletsByTag = "DELETE /v2/droplets"
	RouteCreateKey           = "POST /v2/account/keys"
	RouteListKeys            = "GET /v2/account/keys"
	RouteGetKey              = "GET /v2/account/keys/{key}"
	RouteUpdateKey           = "PUT /v2/account/keys/{key}"
	RouteDeleteKey           = "DELETE /v2/account/keys/{key}"
	RouteAccount             = "GET /v2/account"
	RouteListRegions         = "GET /v2/regions"
	RouteListSizes           = "GET /v2/sizes"
	RouteListImages          = "GET /v2/images"
	RouteGetImage            = "GET /v2/images/{image}"
)

// unmatchedRoute is the pattern recorded for paths the fake does not serve.
const unmatchedRoute = "<unmatched>"

// Server is a fake DigitalOcean API. Create it with New, then Start it.
// All methods are safe for concurrent use.
type Server struct {
	// opts is fixed after New but for BootDelay, DeleteLag and RateLimits,
	// which SetTiming changes under timingMu, and Guest, which
	// SetDefaultGuest changes under timingMu.
	opts     Options
	timingMu sync.RWMutex
	now      func() time.Time
	catalog  *catalog
	mux      *http.ServeMux

	accountsMu sync.RWMutex
	accounts   map[string]*account // by token; tokens never leave this map

	dropletIDs atomic.Int64
	keyIDs     atomic.Int64
	actionIDs  atomic.Int64
	ips        ipAllocator

	faults  faultInjector
	stock   stock
	records requestLog
	holds   holdSet
	ssh     *sshHost  // nil unless Options.SSH
	ports   *sshPorts // nil unless Options.SSH

	closed   atomic.Bool
	lifeMu   sync.Mutex
	httpSrv  *http.Server
	boundURL atomic.Value // string: "http://host:port/"
	addr     string       // the bound address, reused by Restart
}

// New builds a Server from opts (zero fields take defaults). It panics on
// an invalid Options.SSHPort or Options.Guest, or if with Options.SSH no
// host key can be generated or no port reserved.
func New(opts Options) *Server {
	opts = opts.withDefaults()
	guest, err := opts.Guest.normalized()
	if err != nil {
		panic(err.Error())
	}
	opts.Guest = guest
	s := &Server{
		opts:     opts,
		now:      opts.Now,
		catalog:  newCatalog(opts),
		accounts: make(map[string]*account),
		ips:      newIPAllocator(),
	}
	s.dropletIDs.Store(400000000)
	s.keyIDs.Store(40000000)
	s.actionIDs.Store(2000000000)
	s.faults.init(opts.Seed)
	s.records.init(opts.MaxRequestRecords)
	if opts.SSH {
		h, err := newSSHHost()
		if err != nil {
			panic(fmt.Sprintf("fake: generating SSH host key: %v", err))
		}
		s.ssh = h
		if s.ports, err = newSSHPorts(opts.SSHPort); err != nil {
			panic(fmt.Sprintf("fake: %v", err))
		}
	}
	s.boundURL.Store("")
	s.mux = s.routes()
	return s
}

func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	s.handle(mux, RouteCreateDroplets, s.createDroplets)
	s.handle(mux, RouteListDroplets, s.listDroplets)
	s.handle(mux, RouteGetDroplet, s.getDroplet)
	s.handle(mux, RouteDeleteDroplet, s.deleteDroplet)
	s.handle(mux, RouteDeleteDropletsByTag, s.deleteDropletsByTag)
	s.handle(mux, RouteCreateKey, s.createKey)
	s.handle(mux, RouteListKeys, s.listKeys)
	s.handle(mux, RouteGetKey, s.getKey)
	s.handle(mux, RouteUpdateKey, s.updateKey)
	s.handle(mux, RouteDeleteKey, s.deleteKey)
	s.handle(mux, RouteAccount, s.getAccount)
	s.handle(mux, RouteListRegions, s.listRegions)
	s.handle(mux, RouteListSizes, s.listSizes)
	s.handle(mux, RouteListImages, s.listImages)
	s.handle(mux, RouteGetImage, s.getImage)
	s.handle(mux, RouteCreateTag, s.createTag)
	s.handle(mux, RouteTagResources, s.tagResources)
	s.handle(mux, RouteListTags, s.listTags)
	s.handle(mux, RouteGetTag, s.getTag)
	s.handle(mux, RouteDeleteTag, s.deleteTag)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.serve(w, r, r.Method+" "+unmatchedRoute, func(*call) reply { return notFound() })
	})
	return mux
}

// Start listens on Options.Addr and serves in the background.
func (s *Server) Start() error {
	s.lifeMu.Lock()
	defer s.lifeMu.Unlock()
	if s.closed.Load() {
		return errors.New("fake: server is closed")
	}
	if s.httpSrv != nil {
		return errors.New("fake: server already started")
	}
	return s.listenLocked(s.opts.Addr)
}

// Restart stops the HTTP listener (dropping open connections) and listens
// again on the same address, keeping all state; it simulates an API outage
// or a connection reset.
func (s *Server) Restart() error {
	s.lifeMu.Lock()
	defer s.lifeMu.Unlock()
	if s.closed.Load() {
		return errors.New("fake: server is closed")
	}
	if s.httpSrv == nil {
		return errors.New("fake: server not started")
	}
	_ = s.httpSrv.Close()
	s.httpSrv = nil
	var err error
	// The old socket is closed synchronously, but retry briefly in case
	// the kernel has not released the port yet.
	for i := 0; i < 50; i++ {
		if err = s.listenLocked(s.addr); err == nil {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return err
}

func (s *Server) listenLocked(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("fake: listen: %w", err)
	}
	s.addr = ln.Addr().String()
	s.boundURL.Store("http://" + s.addr + "/")
	srv := &http.Server{Handler: s.mux, ReadHeaderTimeout: 10 * time.Second}
	s.httpSrv = srv
	go func() { _ = srv.Serve(ln) }()
	return nil
}

// URL is the API base URL, with a trailing slash, for godo.SetBaseURL.
// It is empty before Start.
func (s *Server) URL() string { return s.boundURL.Load().(string) }

// Close stops the HTTP listener, every droplet's SSH server and pending
// timers, and releases the SSH port. State is kept for inspection; the
// server cannot be started again.
func (s *Server) Close() {
	s.lifeMu.Lock()
	s.closed.Store(true)
	if s.httpSrv != nil {
		_ = s.httpSrv.Close()
		s.httpSrv = nil
	}
	s.lifeMu.Unlock()
	for _, acc := range s.allAccounts() {
		acc.mu.Lock()
		for _, d := range acc.droplets {
			d.halt()
		}
		acc.mu.Unlock()
	}
	if s.ports != nil {
		s.ports.close()
	}
}
