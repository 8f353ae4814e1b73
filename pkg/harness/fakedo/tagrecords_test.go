package fakedo

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/digitalocean/godo"
)

func TestTagResourcesRecordsNameEveryDropletWhateverTheAnswer(t *testing.T) {
	srv := startFake(t, Options{}, AccountOptions{})
	c := newClient(t, srv, testToken)
	ctx := ctxT(t)
	a, _, err := c.Droplets.Create(ctx, basicCreate("a"))
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := c.Droplets.Create(ctx, basicCreate("b"))
	if err != nil {
		t.Fatal(err)
	}
	tagAll := func(ids ...int) error {
		req := &godo.TagResourcesRequest{}
		for _, id := range ids {
			req.Resources = append(req.Resources, godo.Resource{ID: strconv.Itoa(id), Type: godo.DropletResourceType})
		}
		_, err := c.Tags.TagResources(context.Background(), "hfdo-delete:1", req)
		return err
	}
	if _, _, err := c.Tags.Create(ctx, &godo.TagCreateRequest{Name: "hfdo-delete:1"}); err != nil {
		t.Fatal(err)
	}
	if err := tagAll(a.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Droplets.Delete(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, tagAll(a.ID, b.ID), http.StatusNotFound)

	got := srv.TagResourcesRecords(testToken)
	if len(got) != 2 {
		t.Fatalf("%d records, want 2: %+v", len(got), got)
	}
	for i, want := range []int{http.StatusNoContent, http.StatusNotFound} {
		r := got[i]
		if r.Tag != "hfdo-delete:1" || r.Status != want || !slices.Equal(r.DropletIDs, []int{a.ID, b.ID}) || r.Time.IsZero() {
			t.Errorf("record %d = %+v, want tag hfdo-delete:1, droplets [%d %d], status %d", i, r, a.ID, b.ID, want)
		}
	}
	if srv.TagResourcesRecords("unknown") != nil {
		t.Error("records for an unknown token")
	}
}
