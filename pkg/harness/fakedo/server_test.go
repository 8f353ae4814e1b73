package fakedo

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/digitalocean/godo"
)

// The fake as a whole: tokens and accounts, the catalog, restarts and the
// out-of-band controls.

func TestUnauthorized(t *testing.T) {
	srv := startFake(t, Options{}, AccountOptions{})
	c := newClient(t, srv, "not-a-known-token")
	_, _, err := c.Droplets.List(ctxT(t), nil)
	er := apiErr(t, err, http.StatusUnauthorized)
	if er.Message != msgUnauthorized {
		t.Fatalf("message = %q", er.Message)
	}
	resp := rawGet(t, srv.URL()+"v2/account", "")
	var body apiError
	_ = json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != http.StatusUnauthorized || body.ID != "unauthorized" {
		t.Fatalf("missing token: %d %+v", resp.StatusCode, body)
	}
	for _, r := range srv.Requests() {
		if r.Status != http.StatusUnauthorized || r.TokenHash != "" {
			t.Fatalf("unexpected record %+v", r)
		}
	}
}

func TestAutoAccounts(t *testing.T) {
	srv := startFake(t, Options{AutoAccountPrefix: "auto-", AutoAccount: AccountOptions{DropletLimit: 7}}, AccountOptions{})
	acct, _, err := newClient(t, srv, "auto-123").Account.Get(ctxT(t))
	if err != nil || acct.DropletLimit != 7 {
		t.Fatalf("auto account: %+v %v", acct, err)
	}
	_, _, err = newClient(t, srv, "manual-123").Account.Get(ctxT(t))
	wantStatus(t, err, http.StatusUnauthorized)
}

func TestAccountsAreIsolated(t *testing.T) {
	srv := startFake(t, Options{}, AccountOptions{})
	srv.AddAccount("other", AccountOptions{})
	ctx := ctxT(t)
	d, _, err := newClient(t, srv, testToken).Droplets.Create(ctx, basicCreate("mine"))
	if err != nil {
		t.Fatal(err)
	}
	other := newClient(t, srv, "other")
	_, _, err = other.Droplets.Get(ctx, d.ID)
	wantStatus(t, err, http.StatusNotFound)
	if ds, _, err := other.Droplets.List(ctx, nil); err != nil || len(ds) != 0 {
		t.Fatalf("other account sees %d droplets (%v)", len(ds), err)
	}
}

func TestCatalogAndUnknownPath(t *testing.T) {
	srv := startFake(t, Options{}, AccountOptions{})
	c := newClient(t, srv, testToken)
	ctx := ctxT(t)
	regions, resp, err := c.Regions.List(ctx, &godo.ListOptions{PerPage: 4})
	if err != nil || len(regions) != 4 || resp.Meta.Total != 10 || resp.Links.IsLastPage() {
		t.Fatalf("regions: %d %+v %v", len(regions), resp, err)
	}
	sizes, _, err := c.Sizes.List(ctx, &godo.ListOptions{PerPage: 200})
	if err != nil || len(sizes) != 6 {
		t.Fatalf("sizes: %d %v", len(sizes), err)
	}
	im, _, err := c.Images.GetBySlug(ctx, "rockylinux-9-x64")
	if err != nil || im.Slug != "rockylinux-9-x64" {
		t.Fatalf("image by slug: %+v %v", im, err)
	}
	byID, _, err := c.Images.GetByID(ctx, im.ID)
	if err != nil || byID.Slug != im.Slug {
		t.Fatalf("image by id: %+v %v", byID, err)
	}
	resp2 := rawGet(t, srv.URL()+"v2/nothing/here", testToken)
	var body apiError
	_ = json.NewDecoder(resp2.Body).Decode(&body)
	if resp2.StatusCode != http.StatusNotFound || body.ID != "not_found" || body.Message != msgNotFound {
		t.Fatalf("unknown path: %d %+v", resp2.StatusCode, body)
	}
	if srv.RequestCounts()["GET "+unmatchedRoute+" 404"] != 1 {
		t.Fatalf("counts = %v", srv.RequestCounts())
	}
}

func TestExtraCatalogEntries(t *testing.T) {
	srv := startFake(t, Options{ExtraSizes: []godo.Size{{Slug: "c-2", Memory: 4096, Vcpus: 2, Available: true}}}, AccountOptions{})
	req := basicCreate("cpu")
	req.Size = "c-2"
	d, _, err := newClient(t, srv, testToken).Droplets.Create(ctxT(t), req)
	if err != nil || d.Size == nil || d.Size.Memory != 4096 {
		t.Fatalf("extra size: %+v %v", d, err)
	}
}

func TestRestartKeepsState(t *testing.T) {
	srv := startFake(t, Options{}, AccountOptions{})
	c := newClient(t, srv, testToken)
	ctx := ctxT(t)
	d, _, err := c.Droplets.Create(ctx, basicCreate("survivor"))
	if err != nil {
		t.Fatal(err)
	}
	url := srv.URL()
	if err := srv.Restart(); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if srv.URL() != url {
		t.Fatalf("URL changed: %s -> %s", url, srv.URL())
	}
	if got, _, err := c.Droplets.Get(ctx, d.ID); err != nil || got.Name != "survivor" {
		t.Fatalf("after restart: %+v %v", got, err)
	}
}

func TestOutOfBandAndControls(t *testing.T) {
	srv := startFake(t, Options{BootDelay: NoDelay}, AccountOptions{})
	c := newClient(t, srv, testToken)
	ctx := ctxT(t)
	d := srv.CreateDropletOutOfBand(testToken, godo.DropletCreateRequest{
		Name: "orphan", Region: "nyc3", Size: "s-1vcpu-1gb",
		Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}, Tags: []string{"hobbyfarm"},
	})
	if d.ID == 0 || d.Status != "new" {
		t.Fatalf("out-of-band droplet = %+v", d)
	}
	ds, _, err := c.Droplets.ListByTag(ctx, "hobbyfarm", nil)
	if err != nil || len(ds) != 1 || ds[0].ID != d.ID {
		t.Fatalf("orphan not listed: %+v %v", ds, err)
	}
	if z := srv.CreateDropletOutOfBand("nobody", godo.DropletCreateRequest{Name: "x"}); z.ID != 0 {
		t.Fatal("unknown token should give the zero droplet")
	}
	if err := srv.SetDropletPublicIP(testToken, d.ID, "127.0.0.9"); err != nil {
		t.Fatal(err)
	}
	if err := srv.SetDropletStatus(testToken, d.ID, "off"); err != nil {
		t.Fatal(err)
	}
	got, _, err := c.Droplets.Get(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ip, _ := got.PublicIPv4(); ip != "127.0.0.9" || got.Status != "off" {
		t.Fatalf("controls not applied: %q %q", ip, got.Status)
	}
	if err := srv.SetDropletStatus(testToken, 1, "off"); err != ErrUnknownDroplet {
		t.Fatalf("unknown droplet err = %v", err)
	}
	recs := srv.Requests()
	for _, r := range recs {
		if strings.Contains(fmt.Sprint(r), testToken) {
			t.Fatalf("record leaks the token: %+v", r)
		}
		if r.TokenHash != TokenHash(testToken) {
			t.Fatalf("record token hash = %q", r.TokenHash)
		}
	}
	if srv.RequestCounts()[RouteGetDroplet+" 200"] != 1 {
		t.Fatalf("counts = %v", srv.RequestCounts())
	}
	srv.ResetRequests()
	if len(srv.Requests()) != 0 || len(srv.RequestCounts()) != 0 {
		t.Fatal("ResetRequests did not clear")
	}
}

func TestRouteRequestsCountsOneRouteByOutcome(t *testing.T) {
	srv := startFake(t, Options{}, AccountOptions{})
	c := newClient(t, srv, testToken)
	if _, _, err := c.Droplets.Create(ctxT(t), basicCreate("made")); err != nil {
		t.Fatal(err)
	}
	refused := basicCreate("refused")
	refused.Region = "nowhere1"
	if _, _, err := c.Droplets.Create(ctxT(t), refused); err == nil {
		t.Fatal("a create in an unknown region was accepted")
	}
	srv.SetFaults(Faults{Rules: map[string]FaultRule{RouteCreateDroplets: {DropResponseAfterApply: 1}}})
	if _, _, err := c.Droplets.Create(ctxT(t), basicCreate("lost")); err == nil {
		t.Fatal("want the dropped answer's transport error")
	}
	if _, _, err := c.Account.Get(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Keys.List(ctxT(t), nil); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		route    string
		outcomes []string
		want     int
	}{
		{RouteCreateDroplets, nil, 3},
		{RouteCreateDroplets, []string{"422"}, 1},
		{RouteCreateDroplets, []string{"202", "dropped"}, 2},
		{RouteAccount, nil, 1}, // not the keys under /v2/account/
		{RouteListKeys, []string{"200"}, 1},
	} {
		if got := srv.RouteRequests(tc.route, tc.outcomes...); got != tc.want {
			t.Errorf("RouteRequests(%q, %q) = %d, want %d (counts %v)", tc.route, tc.outcomes, got, tc.want, srv.RequestCounts())
		}
	}
}
