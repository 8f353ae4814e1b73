package digitalocean

import (
	"context"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	dto "github.com/prometheus/client_model/go"
)

func catalogServer(t *testing.T, opts fakedo.Options) *fakedo.Server {
	t.Helper()
	do := fakedo.New(opts)
	if err := do.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(do.Close)
	return do
}

// catalogRequests counts the catalog's requests the fake answered, by route.
func catalogRequests(do *fakedo.Server) map[string]int {
	out := map[string]int{}
	for _, r := range do.Requests() {
		out[r.Pattern]++
	}
	return out
}

func TestCatalogIsFetchedOncePerTokenAndTTL(t *testing.T) {
	do := catalogServer(t, fakedo.Options{ExtraSizes: []godo.Size{{Slug: "s-8vcpu-16gb", Available: true, PriceMonthly: 96, Regions: []string{"sfo3"}}}})
	const token = "dop_v1_catalog"
	do.AddAccount(token, fakedo.AccountOptions{})
	cats := NewCatalogs(NewClients(do.URL(), LimiterOptions{}))
	now := time.Now()
	cats.now = func() time.Time { return now }
	ctx := context.Background()

	for range 5 {
		if err := cats.CheckAccount(ctx, token, 0); err != nil {
			t.Fatal(err)
		}
		cat, err := cats.Get(ctx, token)
		if err != nil {
			t.Fatal(err)
		}
		if !cat.SizeInRegion("s-8vcpu-16gb", "sfo3") || cat.SizeInRegion("s-8vcpu-16gb", "nyc1") || !cat.SizeInRegion("s-1vcpu-1gb", "nyc1") {
			t.Fatalf("size availability by region is wrong: %+v", cat.Sizes["s-8vcpu-16gb"])
		}
		if im, err := cats.Image(ctx, token, "ubuntu-22-04-x64"); err != nil || im == nil {
			t.Fatalf("distribution image: %v, %v", im, err)
		}
		if im, err := cats.Image(ctx, token, "no-such-image"); err != nil || im != nil {
			t.Fatalf("unknown image: %v, %v; want nil, nil", im, err)
		}
	}
	want := map[string]int{fakedo.RouteAccount: 1, fakedo.RouteListRegions: 1, fakedo.RouteListSizes: 1, fakedo.RouteListImages: 1, fakedo.RouteGetImage: 1}
	if got := catalogRequests(do); !equalCounts(got, want) {
		t.Fatalf("requests %v, want %v", got, want)
	}

	now = now.Add(CatalogTTL + time.Second)
	if _, err := cats.Get(ctx, token); err != nil {
		t.Fatal(err)
	}
	if err := cats.CheckAccount(ctx, token, 0); err != nil {
		t.Fatal(err)
	}
	if got := catalogRequests(do); got[fakedo.RouteListRegions] != 2 || got[fakedo.RouteAccount] != 2 {
		t.Errorf("after an hour: %v, want the catalog and the account fetched again", got)
	}
}

func TestRevokedTokenVerdictIsKept(t *testing.T) {
	do := catalogServer(t, fakedo.Options{})
	cats := NewCatalogs(NewClients(do.URL(), LimiterOptions{}))
	for range 3 {
		err := cats.CheckAccount(context.Background(), "dop_v1_revoked", 0)
		if Classify(err).Reason != "Unauthorized" {
			t.Fatalf("unknown token: %v, want Unauthorized", err)
		}
	}
	if n := catalogRequests(do)[fakedo.RouteAccount]; n != 1 {
		t.Errorf("%d account requests, want 1", n)
	}
	// A recent-enough verdict is not asked again; an older one is.
	cats.now = func() time.Time { return time.Now().Add(2 * time.Minute) }
	_ = cats.CheckAccount(context.Background(), "dop_v1_revoked", time.Minute)
	if n := catalogRequests(do)[fakedo.RouteAccount]; n != 2 {
		t.Errorf("%d account requests after the verdict aged, want 2", n)
	}
}

// Catalog requests go last: with the token's budget mostly spent they are
// held back, counted as "catalog", while re-reads still go.
func TestCatalogHasTheLowestPriority(t *testing.T) {
	do := catalogServer(t, fakedo.Options{})
	const token = "dop_v1_catalog-priority"
	do.AddAccount(token, fakedo.AccountOptions{})
	clients := NewClients(do.URL(), LimiterOptions{Limits: []RateLimit{{Requests: 10, Window: time.Minute}}, Headroom: 0.1})
	client, err := clients.For(token)
	if err != nil {
		t.Fatal(err)
	}
	// Budget 9: catalog requests may fill 5 of it (rounded), re-reads 6.
	resync := WithPriority(context.Background(), PriorityResync)
	for range 5 {
		if _, _, err := client.Account.Get(resync); err != nil {
			t.Fatal(err)
		}
	}
	before := heldBack(t, "catalog", TokenHash(token))
	err = NewCatalogs(clients).CheckAccount(context.Background(), token, 0)
	if !IsHeldBack(err) {
		t.Fatalf("catalog request with the budget mostly spent: %v, want held back", err)
	}
	if after := heldBack(t, "catalog", TokenHash(token)); after != before+1 {
		t.Errorf("held-back metric for catalog went %v → %v, want +1", before, after)
	}
	if _, _, err := client.Account.Get(resync); err != nil {
		t.Errorf("a re-read after the catalog was held back: %v, want it sent", err)
	}
}

func heldBack(t *testing.T, priority, tokenHash string) float64 {
	t.Helper()
	var m dto.Metric
	if err := metrics.HeldBack.WithLabelValues(priority, tokenHash).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// The account's droplet limit comes with the token's check; the droplets
// it holds (every installation's) cost one request, reused for maxAge;
// both are published by token hash.
func TestAccountDropletLimitAndDropletsHeld(t *testing.T) {
	do := catalogServer(t, fakedo.Options{BootDelay: fakedo.NoDelay})
	const token = "dop_v1_account_droplets"
	do.AddAccount(token, fakedo.AccountOptions{DropletLimit: 100})
	for _, name := range []string{"a", "b", "c"} {
		do.CreateDropletOutOfBand(token, godo.DropletCreateRequest{Name: name, Region: "nyc1", Size: "s-1vcpu-1gb",
			Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}})
	}
	cats := NewCatalogs(NewClients(do.URL(), LimiterOptions{}))
	ctx := context.Background()
	if got := cats.DropletLimit(token); got != 0 {
		t.Fatalf("limit before any account check: %d, want 0 (not known)", got)
	}
	if err := cats.CheckAccount(ctx, token, 0); err != nil {
		t.Fatal(err)
	}
	if got := cats.DropletLimit(token); got != 100 {
		t.Errorf("limit %d, want 100", got)
	}
	for range 2 {
		if held, err := cats.DropletsHeld(ctx, token, time.Minute); err != nil || held != 3 {
			t.Fatalf("held %d, %v; want 3", held, err)
		}
	}
	if n := catalogRequests(do)[fakedo.RouteListDroplets]; n != 1 {
		t.Errorf("%d droplet lists for two reads within maxAge, want 1", n)
	}
	hash := TokenHash(token)
	for _, c := range []struct {
		name  string
		gauge interface{ Write(*dto.Metric) error }
		want  float64
	}{
		{"hf_do_account_droplet_limit", metrics.AccountDropletLimit.WithLabelValues(hash), 100},
		{"hf_do_account_droplets", metrics.AccountDroplets.WithLabelValues(hash), 3},
	} {
		var m dto.Metric
		if err := c.gauge.Write(&m); err != nil || m.GetGauge().GetValue() != c.want {
			t.Errorf("%s = %v (%v), want %v", c.name, m.GetGauge().GetValue(), err, c.want)
		}
	}
}
