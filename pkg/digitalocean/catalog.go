package digitalocean

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/digitalocean/godo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
)

// CatalogTTL is how long a token's catalog is reused: DigitalOcean's
// regions, sizes and images change a few times a year.
const CatalogTTL = time.Hour

// AccountTTL is how long a token's account check is reused.
const AccountTTL = 10 * time.Minute

// catalogPageSize fits all of DigitalOcean's regions, sizes and
// distribution images in one page each.
const catalogPageSize = 200

// maxCatalogRetry bounds how long a failed fetch is answered from memory.
const maxCatalogRetry = 5 * time.Minute

// Catalog is what DigitalOcean offers one token: its regions, sizes and
// public distribution images, by slug. It is shared: never change it.
type Catalog struct {
	Regions map[string]godo.Region
	Sizes   map[string]godo.Size
	Images  map[string]godo.Image
	Fetched time.Time
}

// SizeInRegion reports whether size may be created in region, by either
// side's list, as DigitalOcean's own catalog may fill only one of them.
func (c *Catalog) SizeInRegion(size, region string) bool {
	s, r := c.Sizes[size], c.Regions[region]
	return contains(s.Regions, region) || contains(r.Sizes, size)
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// Catalogs caches each token's Catalog, account check and image lookups,
// keyed by the token's hash. All its requests go at PriorityCatalog, so a
// busy token spends its budget on droplets first. With CatalogTTL and
// AccountTTL a token costs about five requests an hour however many
// Environments use it, and the account's droplet count (DropletsHeld) one
// more at most every AccountTTL.
type Catalogs struct {
	clients *Clients
	now     func() time.Time
	mu      sync.Mutex
	byToken map[string]*tokenCatalog
}

// tokenCatalog is one token's cache; mu makes concurrent callers share one fetch.
type tokenCatalog struct {
	mu      sync.Mutex
	catalog *Catalog
	// failed is the last fetch's error, answered until retryAt.
	failed  error
	retryAt time.Time
	account verdict
	images  map[string]imageVerdict
	// held is the account's droplet count as last read.
	held count
}

type verdict struct {
	checked time.Time
	err     error // nil: the token works
	// dropletLimit is the account's droplet limit (0: not read).
	dropletLimit int
}

type count struct {
	read time.Time
	n    int
}

type imageVerdict struct {
	checked time.Time
	image   *godo.Image // nil: DigitalOcean has no such image for this token
}

// NewCatalogs returns an empty cache whose requests go through clients.
func NewCatalogs(clients *Clients) *Catalogs {
	return &Catalogs{clients: clients, now: time.Now, byToken: map[string]*tokenCatalog{}}
}

func (c *Catalogs) forToken(token string) *tokenCatalog {
	key := TokenHash(token)
	c.mu.Lock()
	defer c.mu.Unlock()
	tc, ok := c.byToken[key]
	if !ok {
		tc = &tokenCatalog{images: map[string]imageVerdict{}}
		c.byToken[key] = tc
	}
	return tc
}

// CheckAccount asks DigitalOcean whether token works (GET /v2/account),
// unless it answered within maxAge (AccountTTL when zero). A 401 or 403 is
// a verdict and is kept; other errors are not, so the next call asks again.
func (c *Catalogs) CheckAccount(ctx context.Context, token string, maxAge time.Duration) error {
	if maxAge <= 0 {
		maxAge = AccountTTL
	}
	tc := c.forToken(token)
	tc.mu.Lock()
	defer tc.mu.Unlock()
	now := c.now()
	if !tc.account.checked.IsZero() && now.Sub(tc.account.checked) < maxAge {
		return tc.account.err
	}
	client, err := c.clients.For(token)
	if err != nil {
		return err
	}
	ctx, cancel := CallContext(WithPriority(ctx, PriorityCatalog))
	defer cancel()
	account, _, err := client.Account.Get(ctx)
	if err == nil || Classify(err).Reason == "Unauthorized" {
		tc.account = verdict{checked: now, err: err}
	}
	if err == nil {
		tc.account.dropletLimit = account.DropletLimit
		metrics.AccountDropletLimit.WithLabelValues(TokenHash(token)).Set(float64(account.DropletLimit))
	}
	return err
}

// DropletLimit is the droplet limit of token's account as its last
// successful CheckAccount read it; 0 when none has.
func (c *Catalogs) DropletLimit(token string) int {
	tc := c.forToken(token)
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.account.dropletLimit
}

// DropletsHeld is how many droplets token's account holds: this
// installation's, other installations' and any others, since they all
// count against the account's droplet limit. One request (a list of one
// droplet a page, read for its total), reused for maxAge (AccountTTL when
// zero).
func (c *Catalogs) DropletsHeld(ctx context.Context, token string, maxAge time.Duration) (int, error) {
	if maxAge <= 0 {
		maxAge = AccountTTL
	}
	tc := c.forToken(token)
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if !tc.held.read.IsZero() && c.now().Sub(tc.held.read) < maxAge {
		return tc.held.n, nil
	}
	return c.countDroplets(ctx, token, tc)
}

// CountDroplets is DropletsHeld read now, whatever the last count's age.
func (c *Catalogs) CountDroplets(ctx context.Context, token string) (int, error) {
	tc := c.forToken(token)
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return c.countDroplets(ctx, token, tc)
}

// countDroplets reads the count of token's account; tc.mu is held.
func (c *Catalogs) countDroplets(ctx context.Context, token string, tc *tokenCatalog) (int, error) {
	now := c.now()
	client, err := c.clients.For(token)
	if err != nil {
		return 0, err
	}
	ctx, cancel := CallContext(WithPriority(ctx, PriorityCatalog))
	defer cancel()
	_, resp, err := client.Droplets.List(ctx, &godo.ListOptions{PerPage: 1})
	if err != nil {
		return 0, err
	}
	if resp.Meta == nil {
		return 0, errors.New("DigitalOcean's droplet list carried no total")
	}
	tc.held = count{read: now, n: resp.Meta.Total}
	metrics.AccountDroplets.WithLabelValues(TokenHash(token)).Set(float64(resp.Meta.Total))
	return resp.Meta.Total, nil
}

// Get returns token's catalog, fetching it when it is older than CatalogTTL.
// A failed fetch is not repeated before its error's RetryAfter: many
// Environments sharing a token then cost one request, not one each.
func (c *Catalogs) Get(ctx context.Context, token string) (*Catalog, error) {
	tc := c.forToken(token)
	tc.mu.Lock()
	defer tc.mu.Unlock()
	now := c.now()
	if tc.catalog != nil && now.Sub(tc.catalog.Fetched) < CatalogTTL {
		return tc.catalog, nil
	}
	if tc.failed != nil && now.Before(tc.retryAt) {
		return nil, tc.failed
	}
	cat, err := c.fetch(ctx, token, now)
	if err != nil {
		tc.failed, tc.retryAt = err, now.Add(min(Classify(err).RetryAfter, maxCatalogRetry))
		return nil, err
	}
	tc.catalog, tc.failed = cat, nil
	return cat, nil
}

// Cached is token's catalog as last fetched, whatever its age; nil when
// none was. It never sends a request.
func (c *Catalogs) Cached(token string) *Catalog {
	tc := c.forToken(token)
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.catalog
}

// Expires is when token's catalog is next refreshed (zero if never fetched).
func (c *Catalogs) Expires(token string) time.Time {
	tc := c.forToken(token)
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.catalog == nil {
		return time.Time{}
	}
	return tc.catalog.Fetched.Add(CatalogTTL)
}

func (c *Catalogs) fetch(ctx context.Context, token string, now time.Time) (*Catalog, error) {
	client, err := c.clients.For(token)
	if err != nil {
		return nil, err
	}
	ctx, cancel := CallContext(WithPriority(ctx, PriorityCatalog))
	defer cancel()
	regions, err := listAll(ctx, client.Regions.List)
	if err != nil {
		return nil, err
	}
	sizes, err := listAll(ctx, client.Sizes.List)
	if err != nil {
		return nil, err
	}
	images, err := listAll(ctx, client.Images.ListDistribution)
	if err != nil {
		return nil, err
	}
	cat := &Catalog{Regions: map[string]godo.Region{}, Sizes: map[string]godo.Size{}, Images: map[string]godo.Image{}, Fetched: now}
	for _, r := range regions {
		cat.Regions[r.Slug] = r
	}
	for _, s := range sizes {
		cat.Sizes[s.Slug] = s
	}
	for _, im := range images {
		if im.Slug != "" {
			cat.Images[im.Slug] = im
		}
	}
	return cat, nil
}

// Image finds an image by slug or numeric ID: in the catalog's distribution
// images, else by GET /v2/images/{ref} (snapshots, custom and Marketplace
// images), whose answer is kept for CatalogTTL. It returns nil, nil when
// DigitalOcean has no such image for this token.
func (c *Catalogs) Image(ctx context.Context, token, ref string) (*godo.Image, error) {
	cat, err := c.Get(ctx, token)
	if err != nil {
		return nil, err
	}
	if im, ok := cat.Images[ref]; ok {
		return &im, nil
	}
	tc := c.forToken(token)
	tc.mu.Lock()
	defer tc.mu.Unlock()
	now := c.now()
	if v, ok := tc.images[ref]; ok && now.Sub(v.checked) < CatalogTTL {
		return v.image, nil
	}
	client, err := c.clients.For(token)
	if err != nil {
		return nil, err
	}
	ctx, cancel := CallContext(WithPriority(ctx, PriorityCatalog))
	defer cancel()
	var im *godo.Image
	var resp *godo.Response
	if id, convErr := strconv.Atoi(ref); convErr == nil {
		im, resp, err = client.Images.GetByID(ctx, id)
	} else {
		im, resp, err = client.Images.GetBySlug(ctx, ref)
	}
	if err != nil && (resp == nil || resp.StatusCode != http.StatusNotFound) {
		return nil, err
	}
	if err != nil {
		im = nil
	}
	tc.images[ref] = imageVerdict{checked: now, image: im}
	return im, nil
}

// listAll pages through a catalog list. Unlike Droplets.ListByTag it keeps its
// priority on later pages: nothing waits for the catalog.
func listAll[T any](ctx context.Context, list func(context.Context, *godo.ListOptions) ([]T, *godo.Response, error)) ([]T, error) {
	return listPages(ctx, catalogPageSize, samePriority, list)
}

func samePriority(ctx context.Context) context.Context { return ctx }
