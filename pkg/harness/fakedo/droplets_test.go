package fakedo

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/godo"
)

func TestCreateNewThenActiveWithIPsByType(t *testing.T) {
	clock := newManualClock()
	srv := startFake(t, Options{Now: clock.Now, BootDelay: 5 * time.Second}, AccountOptions{})
	c := newClient(t, srv, testToken)
	ctx := ctxT(t)

	req := basicCreate("vm-1")
	req.IPv6 = true
	d, resp, err := c.Droplets.Create(ctx, req)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status = %d, want 202", resp.StatusCode)
	}
	if d.Status != "new" || d.Name != "vm-1" || d.SizeSlug != "s-1vcpu-1gb" {
		t.Fatalf("unexpected droplet %+v", d)
	}
	if d.Region == nil || d.Region.Slug != "nyc3" || d.Image == nil || d.Image.Slug != "ubuntu-22-04-x64" {
		t.Fatalf("region/image objects missing: %+v %+v", d.Region, d.Image)
	}
	if d.VPCUUID == "" || d.Created == "" {
		t.Fatalf("vpc_uuid/created_at missing: %q %q", d.VPCUUID, d.Created)
	}
	if _, err := time.Parse(time.RFC3339, d.Created); err != nil {
		t.Fatalf("created_at %q is not RFC3339", d.Created)
	}
	if !contains(d.Features, "ipv6") {
		t.Fatalf("features = %v, want ipv6", d.Features)
	}
	if len(resp.Links.Actions) != 1 || resp.Links.Actions[0].Rel != "create" || resp.Links.Actions[0].ID == 0 {
		t.Fatalf("links.actions = %+v", resp.Links.Actions)
	}
	if ip, _ := d.PublicIPv4(); ip != "" {
		t.Fatalf("new droplet already has public IP %q", ip)
	}

	// Still new before the boot delay; active after it.
	clock.Advance(4 * time.Second)
	got, _, err := c.Droplets.Get(ctx, d.ID)
	if err != nil || got.Status != "new" {
		t.Fatalf("before boot: status %v err %v", got, err)
	}
	clock.Advance(time.Second)
	got, _, err = c.Droplets.Get(ctx, d.ID)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if got.Status != "active" {
		t.Fatalf("status = %q, want active", got.Status)
	}
	if got.Networks.V4[0].Type != "private" {
		t.Fatalf("private network should be listed first: %+v", got.Networks.V4)
	}
	pub, _ := got.PublicIPv4()
	priv, _ := got.PrivateIPv4()
	v6, _ := got.PublicIPv6()
	if !strings.HasPrefix(pub, "127.100.") || !isLoopback(pub) {
		t.Fatalf("public IPv4 %q is not from 127.100.0.0/16", pub)
	}
	if !strings.HasPrefix(priv, "127.10.") || !isLoopback(priv) {
		t.Fatalf("private IPv4 %q is not loopback from 127.10.0.0", priv)
	}
	if !strings.HasPrefix(v6, "2001:db8:") {
		t.Fatalf("public IPv6 = %q", v6)
	}
}

func TestNewDropletJSONShape(t *testing.T) {
	srv := startFake(t, Options{}, AccountOptions{})
	body := `{"name":"shape","region":"nyc1","size":"s-1vcpu-1gb","image":"debian-12-x64"}`
	req, _ := http.NewRequest(http.MethodPost, srv.URL()+"v2/droplets", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var root struct {
		Droplet map[string]json.RawMessage `json:"droplet"`
	}
	if err := json.Unmarshal(raw, &root); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	if got := string(root.Droplet["networks"]); got != `{"v4":[],"v6":[]}` {
		t.Fatalf("networks = %s", got)
	}
	if got := string(root.Droplet["status"]); got != `"new"` {
		t.Fatalf("status = %s", got)
	}
	if got := string(root.Droplet["tags"]); got != `[]` {
		t.Fatalf("tags = %s", got)
	}
}

func TestMultiCreate(t *testing.T) {
	srv := startFake(t, Options{}, AccountOptions{})
	c := newClient(t, srv, testToken)
	ctx := ctxT(t)
	ds, resp, err := c.Droplets.CreateMultiple(ctx, &godo.DropletMultiCreateRequest{
		Names: []string{"a", "b", "c"}, Region: "fra1", Size: "s-1vcpu-2gb",
		Image: godo.DropletCreateImage{Slug: "ubuntu-24-04-x64"}, Tags: []string{"multi"},
	})
	if err != nil {
		t.Fatalf("CreateMultiple: %v", err)
	}
	if resp.StatusCode != http.StatusAccepted || len(ds) != 3 {
		t.Fatalf("status %d, %d droplets", resp.StatusCode, len(ds))
	}
	for i, name := range []string{"a", "b", "c"} {
		if ds[i].Name != name || ds[i].Status != "new" || !contains(ds[i].Tags, "multi") {
			t.Fatalf("droplet %d = %+v", i, ds[i])
		}
	}
	if len(resp.Links.Actions) == 0 {
		t.Fatal("no links.actions on multi-create")
	}
	if n := len(srv.Droplets(testToken)); n != 3 {
		t.Fatalf("server has %d droplets, want 3", n)
	}

	names := make([]string, 11)
	for i := range names {
		names[i] = fmt.Sprintf("n%d", i)
	}
	_, _, err = c.Droplets.CreateMultiple(ctx, &godo.DropletMultiCreateRequest{
		Names: names, Region: "fra1", Size: "s-1vcpu-2gb", Image: godo.DropletCreateImage{Slug: "ubuntu-24-04-x64"},
	})
	wantStatus(t, err, http.StatusUnprocessableEntity)
}

func TestPaginationOver450Droplets(t *testing.T) {
	srv := startFake(t, Options{}, AccountOptions{DropletLimit: 1000})
	c := newClient(t, srv, testToken)
	ctx := ctxT(t)
	for i := 0; i < 45; i++ {
		names := make([]string, 10)
		for j := range names {
			names[j] = fmt.Sprintf("p-%d-%d", i, j)
		}
		if _, _, err := c.Droplets.CreateMultiple(ctx, &godo.DropletMultiCreateRequest{
			Names: names, Region: "ams3", Size: "s-1vcpu-1gb",
			Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}, Tags: []string{"page-me"},
		}); err != nil {
			t.Fatalf("CreateMultiple: %v", err)
		}
	}
	// A droplet without the tag must not be listed.
	if _, _, err := c.Droplets.Create(ctx, &godo.DropletCreateRequest{Name: "other", Region: "ams3",
		Size: "s-1vcpu-1gb", Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}}); err != nil {
		t.Fatal(err)
	}

	opt := &godo.ListOptions{PerPage: 200, Page: 1}
	seen := map[int]bool{}
	var sizes, pages []int
	for {
		ds, resp, err := c.Droplets.ListByTag(ctx, "page-me", opt)
		if err != nil {
			t.Fatalf("ListByTag page %d: %v", opt.Page, err)
		}
		if resp.Meta == nil || resp.Meta.Total != 450 {
			t.Fatalf("meta = %+v, want total 450", resp.Meta)
		}
		for _, d := range ds {
			if seen[d.ID] {
				t.Fatalf("droplet %d listed twice", d.ID)
			}
			seen[d.ID] = true
		}
		sizes = append(sizes, len(ds))
		cur, err := resp.Links.CurrentPage()
		if err != nil {
			t.Fatalf("CurrentPage: %v", err)
		}
		pages = append(pages, cur)
		if resp.Links == nil || resp.Links.IsLastPage() {
			break
		}
		if !strings.HasPrefix(resp.Links.Pages.Next, srv.URL()+"v2/droplets?") {
			t.Fatalf("next link %q not absolute on the fake", resp.Links.Pages.Next)
		}
		opt.Page = cur + 1
		if opt.Page > 5 {
			t.Fatal("pagination does not terminate")
		}
	}
	if fmt.Sprint(sizes) != "[200 200 50]" || fmt.Sprint(pages) != "[1 2 3]" || len(seen) != 450 {
		t.Fatalf("pages %v sizes %v seen %d", pages, sizes, len(seen))
	}

	// One page only: "links":{} and godo treats it as the last page 1.
	_, resp, err := c.Droplets.ListByTag(ctx, "page-me", &godo.ListOptions{PerPage: 200, Page: 3})
	if err != nil || resp.Links.Pages == nil || resp.Links.Pages.Next != "" || resp.Links.Pages.Prev == "" {
		t.Fatalf("last page links = %+v err %v", resp.Links, err)
	}
	raw := rawGet(t, srv.URL()+"v2/droplets?name=other", testToken)
	b, _ := io.ReadAll(raw.Body)
	if !strings.Contains(string(b), `"links":{}`) || !strings.Contains(string(b), `"meta":{"total":1}`) {
		t.Fatalf("single page body lacks empty links/meta: %s", b)
	}
}

func TestCreateValidation(t *testing.T) {
	srv := startFake(t, Options{}, AccountOptions{DropletLimit: 2})
	c := newClient(t, srv, testToken)
	ctx := ctxT(t)

	long := strings.Repeat("a", 64)
	cases := []struct {
		name    string
		mutate  func(r *godo.DropletCreateRequest)
		message string
	}{
		{"unknown region", func(r *godo.DropletCreateRequest) { r.Region = "mars1" }, msgBadRegion},
		{"unknown size", func(r *godo.DropletCreateRequest) { r.Size = "s-64vcpu-1tb" }, msgBadSize},
		{"unknown image", func(r *godo.DropletCreateRequest) {
			r.Image = godo.DropletCreateImage{Slug: "windows-95"}
		}, msgBadImage},
		{"name chars", func(r *godo.DropletCreateRequest) { r.Name = "bad_name!" }, msgHostnameChars},
		{"name label too long", func(r *godo.DropletCreateRequest) { r.Name = long + ".example" }, "63"},
		{"name too long", func(r *godo.DropletCreateRequest) {
			r.Name = strings.Repeat(strings.Repeat("b", 60)+".", 5)[:256]
		}, "255"},
		{"tag chars", func(r *godo.DropletCreateRequest) { r.Tags = []string{"has space"} }, "tag"},
		{"tag too long", func(r *godo.DropletCreateRequest) { r.Tags = []string{strings.Repeat("t", 256)} }, "tag"},
		{"user_data too big", func(r *godo.DropletCreateRequest) { r.UserData = strings.Repeat("x", 64*1024+1) }, "user_data"},
		{"unknown key id", func(r *godo.DropletCreateRequest) {
			r.SSHKeys = []godo.DropletCreateSSHKey{{ID: 12345}}
		}, "12345 are invalid key identifiers"},
		{"unknown key fingerprint", func(r *godo.DropletCreateRequest) {
			r.SSHKeys = []godo.DropletCreateSSHKey{{Fingerprint: "00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff"}}
		}, "invalid key identifiers"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := basicCreate("ok-name")
			tc.mutate(req)
			_, _, err := c.Droplets.Create(ctx, req)
			er := apiErr(t, err, http.StatusUnprocessableEntity)
			if !strings.Contains(er.Message, tc.message) {
				t.Fatalf("message %q does not contain %q", er.Message, tc.message)
			}
		})
	}
	t.Run("valid edge cases pass", func(t *testing.T) {
		req := basicCreate(strings.Repeat("c", 63) + ".Example-1")
		req.Tags = []string{strings.Repeat("t", 255), "a_b-c:d"}
		req.UserData = strings.Repeat("x", 64*1024)
		if _, _, err := c.Droplets.Create(ctx, req); err != nil {
			t.Fatalf("edge-valid create rejected: %v", err)
		}
	})
	if n := len(srv.Droplets(testToken)); n != 1 {
		t.Fatalf("rejected creates left droplets behind: %d", n)
	}
	t.Run("droplet limit counts existing plus requested", func(t *testing.T) {
		_, _, err := c.Droplets.CreateMultiple(ctx, &godo.DropletMultiCreateRequest{
			Names: []string{"x1", "x2"}, Region: "nyc3", Size: "s-1vcpu-1gb",
			Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"},
		})
		if er := apiErr(t, err, http.StatusUnprocessableEntity); er.Message != msgDropletLimit {
			t.Fatalf("message = %q", er.Message)
		}
		if _, _, err := c.Droplets.Create(ctx, basicCreate("fits")); err != nil {
			t.Fatalf("create within limit: %v", err)
		}
		_, _, err = c.Droplets.Create(ctx, basicCreate("over"))
		wantStatus(t, err, http.StatusUnprocessableEntity)
		acct, _, err := c.Account.Get(ctx)
		if err != nil || acct.DropletLimit != 2 || acct.Status != "active" || acct.UUID == "" {
			t.Fatalf("account = %+v err %v", acct, err)
		}
	})
}

func TestDeleteAndDeleteLag(t *testing.T) {
	clock := newManualClock()
	srv := startFake(t, Options{Now: clock.Now, BootDelay: NoDelay, DeleteLag: 30 * time.Second}, AccountOptions{})
	c := newClient(t, srv, testToken)
	ctx := ctxT(t)
	d, _, err := c.Droplets.Create(ctx, basicCreate("doomed"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := c.Droplets.Get(ctx, d.ID); got == nil || got.Status != "active" {
		t.Fatalf("NoDelay droplet not active: %+v", got)
	}
	resp, err := c.Droplets.Delete(ctx, d.ID)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("Delete: %v %v", resp, err)
	}
	_, _, err = c.Droplets.Get(ctx, d.ID)
	wantStatus(t, err, http.StatusNotFound)
	_, err = c.Droplets.Delete(ctx, d.ID)
	wantStatus(t, err, http.StatusNotFound)

	clock.Advance(29 * time.Second)
	ds, _, err := c.Droplets.ListByTag(ctx, "hobbyfarm", nil)
	if err != nil || len(ds) != 1 || ds[0].ID != d.ID || ds[0].Status != "active" {
		t.Fatalf("during lag list = %+v err %v", ds, err)
	}
	if len(srv.Droplets(testToken)) != 0 {
		t.Fatal("inspection should not show deleted droplets")
	}
	clock.Advance(time.Second)
	if ds, _, err = c.Droplets.ListByTag(ctx, "hobbyfarm", nil); err != nil || len(ds) != 0 {
		t.Fatalf("after lag list = %+v err %v", ds, err)
	}

	_, err = c.Droplets.Delete(ctx, 999999999)
	wantStatus(t, err, http.StatusNotFound)

	for _, n := range []string{"t1", "t2"} {
		if _, _, err := c.Droplets.Create(ctx, basicCreate(n)); err != nil {
			t.Fatal(err)
		}
	}
	if resp, err := c.Droplets.DeleteByTag(ctx, "hobbyfarm"); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DeleteByTag: %v %v", resp, err)
	}
	if n := len(srv.Droplets(testToken)); n != 0 {
		t.Fatalf("%d droplets left after DeleteByTag", n)
	}
}

// A region sold out of a size refuses its creates with DigitalOcean's
// message, a multi-create as a whole; other regions still serve it, and a
// restock ends it.
func TestSoldOutSizeRefusesCreatesInItsRegion(t *testing.T) {
	srv := startFake(t, Options{BootDelay: NoDelay}, AccountOptions{DropletLimit: 100})
	c := newClient(t, srv, testToken)
	ctx := ctxT(t)
	srv.SellOut("nyc3", "s-1vcpu-1gb", 2)

	refused := func(what string, err error) {
		t.Helper()
		var resp *godo.ErrorResponse
		if !errors.As(err, &resp) || resp.Response.StatusCode != http.StatusUnprocessableEntity || resp.Message != "Size is not available in this region." {
			t.Fatalf("%s: %v, want 422 %q", what, err, "Size is not available in this region.")
		}
	}
	multi := &godo.DropletMultiCreateRequest{Names: []string{"m-1", "m-2", "m-3"}, Region: "nyc3", Size: "s-1vcpu-1gb",
		Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}}
	_, _, err := c.Droplets.CreateMultiple(ctx, multi)
	refused("three with two left", err)
	for _, name := range []string{"vm-1", "vm-2"} {
		if _, _, err := c.Droplets.Create(ctx, basicCreate(name)); err != nil {
			t.Fatalf("%s within the stock: %v", name, err)
		}
	}
	_, _, err = c.Droplets.Create(ctx, basicCreate("vm-3"))
	refused("after the stock", err)
	elsewhere := basicCreate("vm-sfo")
	elsewhere.Region = "sfo3"
	if _, _, err := c.Droplets.Create(ctx, elsewhere); err != nil {
		t.Errorf("another region: %v", err)
	}
	srv.Restock("nyc3", "s-1vcpu-1gb")
	if _, _, err := c.Droplets.Create(ctx, basicCreate("vm-4")); err != nil {
		t.Errorf("after the restock: %v", err)
	}
}
