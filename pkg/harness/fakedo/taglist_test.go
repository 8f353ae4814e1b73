package fakedo

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/digitalocean/godo"
)

// tagDroplets tags droplets through godo, failing the test on an error.
func tagDroplets(t *testing.T, c *godo.Client, tag string, ids ...int) {
	t.Helper()
	req := &godo.TagResourcesRequest{}
	for _, id := range ids {
		req.Resources = append(req.Resources, godo.Resource{ID: strconv.Itoa(id), Type: godo.DropletResourceType})
	}
	if _, err := c.Tags.TagResources(ctxT(t), tag, req); err != nil {
		t.Fatalf("TagResources %s: %v", tag, err)
	}
}

func createDroplet(t *testing.T, c *godo.Client, req *godo.DropletCreateRequest) *godo.Droplet {
	t.Helper()
	d, _, err := c.Droplets.Create(ctxT(t), req)
	if err != nil {
		t.Fatalf("Create %s: %v", req.Name, err)
	}
	return d
}

func TestListTagsPagesEveryTagWithLiveDropletCounts(t *testing.T) {
	srv := startFake(t, Options{RateLimits: RateLimits{Disabled: true}}, AccountOptions{})
	c := newClient(t, srv, testToken)
	ctx := ctxT(t)
	live := createDroplet(t, c, basicCreate("live")) // hobbyfarm, env:test
	goneReq := basicCreate("gone")
	goneReq.Tags = []string{"hobbyfarm", "gone:1"}
	gone := createDroplet(t, c, goneReq)
	if _, err := c.Droplets.Delete(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Tags.Create(ctx, &godo.TagCreateRequest{Name: "pool:x"}); err != nil {
		t.Fatal(err)
	}
	tagDroplets(t, c, "pool:x", live.ID)
	for i := range 446 { // with the 4 above: 450 tags
		if _, _, err := c.Tags.Create(ctx, &godo.TagCreateRequest{Name: fmt.Sprintf("t-%03d", i)}); err != nil {
			t.Fatal(err)
		}
	}

	var all []godo.Tag
	opt := &godo.ListOptions{Page: 1, PerPage: 500} // capped at 200, as other lists
	for {
		tags, resp, err := c.Tags.List(ctx, opt)
		if err != nil {
			t.Fatalf("List page %d: %v", opt.Page, err)
		}
		if want := min(200, 450-len(all)); len(tags) != want || resp.Meta == nil || resp.Meta.Total != 450 {
			t.Fatalf("page %d: %d tags (want %d), meta %+v", opt.Page, len(tags), want, resp.Meta)
		}
		all = append(all, tags...)
		if resp.Links.IsLastPage() {
			break
		}
		if opt.Page++; opt.Page > 3 {
			t.Fatalf("more than 3 pages at per_page 200")
		}
	}
	if opt.Page != 3 || len(all) != 450 {
		t.Fatalf("%d pages, %d tags; want 3 pages of 450 tags", opt.Page, len(all))
	}
	names := make([]string, len(all))
	byName := map[string]godo.Tag{}
	for i, tag := range all {
		names[i] = tag.Name
		byName[tag.Name] = tag
	}
	if !slices.IsSorted(names) || len(byName) != 450 {
		t.Fatalf("tags not listed once each by name: %v", names)
	}

	uri := func(id int) string { return "https://api.digitalocean.com/v2/droplets/" + strconv.Itoa(id) }
	for _, want := range []struct {
		name  string
		count int
		last  string
	}{
		{"hobbyfarm", 1, uri(gone.ID)}, // the deleted droplet no longer counts
		{"env:test", 1, uri(live.ID)},
		{"gone:1", 0, uri(gone.ID)}, // outlives its last droplet
		{"pool:x", 1, uri(live.ID)},
		{"t-000", 0, ""},
	} {
		r := byName[want.name].Resources
		if r == nil || r.Droplets == nil || r.Images == nil || r.Volumes == nil || r.VolumeSnapshots == nil || r.Databases == nil {
			t.Fatalf("%s: resources %+v, want every type", want.name, r)
		}
		if r.Count != want.count || r.Droplets.Count != want.count || r.LastTaggedURI != want.last || r.Droplets.LastTaggedURI != want.last || r.Images.Count != 0 {
			t.Errorf("%s: count %d/%d last %q/%q, want %d and %q", want.name, r.Count, r.Droplets.Count, r.LastTaggedURI, r.Droplets.LastTaggedURI, want.count, want.last)
		}
	}

	inspected := srv.Tags(testToken)
	if len(inspected) != 450 {
		t.Fatalf("Tags: %d, want 450", len(inspected))
	}
	for i, tc := range inspected {
		if r := byName[tc.Name].Resources; tc.Name != names[i] || tc.Droplets != r.Droplets.Count {
			t.Fatalf("Tags[%d] = %+v, listed %s with %d droplets", i, tc, names[i], r.Droplets.Count)
		}
	}
	if srv.Tags("unknown") != nil {
		t.Error("Tags for an unknown token")
	}
	if got := srv.RequestCounts()[RouteListTags+" 200"]; got != 3 {
		t.Errorf("%s 200 counted %d times, want 3", RouteListTags, got)
	}
}

func TestGetTagAnswersDigitalOceansShape(t *testing.T) {
	srv := startFake(t, Options{}, AccountOptions{})
	c := newClient(t, srv, testToken)
	ctx := ctxT(t)
	a := createDroplet(t, c, basicCreate("a"))
	b := createDroplet(t, c, basicCreate("b"))
	tag, resp, err := c.Tags.Get(ctx, "hobbyfarm")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("Get: %v", err)
	}
	want := "https://api.digitalocean.com/v2/droplets/" + strconv.Itoa(b.ID)
	if r := tag.Resources; tag.Name != "hobbyfarm" || r.Count != 2 || r.Droplets.Count != 2 || r.Droplets.LastTaggedURI != want {
		t.Fatalf("Get hobbyfarm = %s %+v %+v, want 2 droplets, last %s", tag.Name, r, r.Droplets, want)
	}
	if _, err := c.Droplets.Delete(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if tag, _, err = c.Tags.Get(ctx, "hobbyfarm"); err != nil || tag.Resources.Droplets.Count != 1 {
		t.Fatalf("Get after a delete: %+v %v, want 1 droplet", tag, err)
	}

	// Exactly what DigitalOcean answers for a tag never put on anything.
	if _, _, err := c.Tags.Create(ctx, &godo.TagCreateRequest{Name: "fresh"}); err != nil {
		t.Fatal(err)
	}
	raw := rawGet(t, srv.URL()+"v2/tags/fresh", testToken)
	body, _ := io.ReadAll(raw.Body)
	const fresh = `{"tag":{"name":"fresh","resources":{"count":0,"droplets":{"count":0},"images":{"count":0},` +
		`"volumes":{"count":0},"volume_snapshots":{"count":0},"databases":{"count":0}}}}`
	if raw.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != fresh {
		t.Fatalf("GET v2/tags/fresh = %d %s, want %s", raw.StatusCode, body, fresh)
	}

	_, _, err = c.Tags.Get(ctx, "no-such-tag")
	wantStatus(t, err, http.StatusNotFound)
	raw = rawGet(t, srv.URL()+"v2/tags/no-such-tag", testToken)
	var e apiError
	_ = json.NewDecoder(raw.Body).Decode(&e)
	if e.ID != "not_found" || e.Message != msgNotFound {
		t.Fatalf("unknown tag: %+v, want DigitalOcean's not_found", e)
	}
}

func TestDeleteTagUntagsLiveDropletsAndForgetsTheTag(t *testing.T) {
	srv := startFake(t, Options{}, AccountOptions{})
	c := newClient(t, srv, testToken)
	ctx := ctxT(t)
	a := createDroplet(t, c, basicCreate("a")) // hobbyfarm, env:test
	b := createDroplet(t, c, basicCreate("b"))
	gone := createDroplet(t, c, basicCreate("gone"))
	if _, err := c.Droplets.Delete(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}

	// A fault on the route answers for it and leaves the tag alone.
	srv.SetFaults(Faults{Rules: map[string]FaultRule{RouteDeleteTag: {ErrorRate: 1}}})
	_, err := c.Tags.Delete(ctx, "hobbyfarm")
	wantStatus(t, err, http.StatusInternalServerError)
	srv.SetFaults(Faults{})
	if _, _, err := c.Tags.Get(ctx, "hobbyfarm"); err != nil {
		t.Fatalf("tag gone after a failed delete: %v", err)
	}

	resp, err := c.Tags.Delete(ctx, "hobbyfarm")
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("Delete: %v", err)
	}
	if listed, _, err := c.Droplets.ListByTag(ctx, "hobbyfarm", nil); err != nil || len(listed) != 0 {
		t.Fatalf("ListByTag after the tag's delete: %d droplets %v, want none", len(listed), err)
	}
	for _, id := range []int{a.ID, b.ID} {
		d, _, err := c.Droplets.Get(ctx, id)
		if err != nil || !slices.Equal(d.Tags, []string{"env:test"}) {
			t.Fatalf("droplet %d tags %v %v, want [env:test]", id, d.Tags, err)
		}
	}
	_, _, err = c.Tags.Get(ctx, "hobbyfarm")
	wantStatus(t, err, http.StatusNotFound)
	_, err = c.Tags.Delete(ctx, "hobbyfarm")
	wantStatus(t, err, http.StatusNotFound)
	_, err = c.Tags.TagResources(ctx, "hobbyfarm", &godo.TagResourcesRequest{
		Resources: []godo.Resource{{ID: strconv.Itoa(a.ID), Type: godo.DropletResourceType}}})
	wantStatus(t, err, http.StatusNotFound)
	if got := srv.Tags(testToken); !slices.Equal(got, []TagCount{{"env:test", 2}}) {
		t.Fatalf("Tags = %+v, want only env:test on 2 droplets", got)
	}

	// The deleted droplet keeps the tag it was deleted with: a delete by
	// the tag still names it as gone, and deletes no live droplet.
	if _, err := c.Droplets.DeleteByTag(ctx, "hobbyfarm"); err != nil {
		t.Fatal(err)
	}
	recs := srv.DeleteRecords(testToken)
	if last := recs[len(recs)-1]; len(last.Deleted) != 0 || !slices.Equal(last.Gone, []int{gone.ID}) {
		t.Fatalf("delete by the deleted tag: %+v, want none deleted and %d gone", last, gone.ID)
	}

	// Created again, the tag starts empty and can be used.
	tag, _, err := c.Tags.Create(ctx, &godo.TagCreateRequest{Name: "hobbyfarm"})
	if err != nil || tag.Resources == nil || tag.Resources.Count != 0 || tag.Resources.LastTaggedURI != "" {
		t.Fatalf("Create again: %+v %v, want an empty tag", tag, err)
	}
	tagDroplets(t, c, "hobbyfarm", a.ID)
	if got := srv.Tags(testToken); !slices.Equal(got, []TagCount{{"env:test", 2}, {"hobbyfarm", 1}}) {
		t.Fatalf("Tags = %+v after tagging a again", got)
	}

	// Creating a droplet with a deleted tag creates it again.
	if _, err := c.Tags.Delete(ctx, "env:test"); err != nil {
		t.Fatal(err)
	}
	createDroplet(t, c, basicCreate("c"))
	if got := srv.Tags(testToken); !slices.Equal(got, []TagCount{{"env:test", 1}, {"hobbyfarm", 2}}) {
		t.Fatalf("Tags = %+v after creating c", got)
	}
}
