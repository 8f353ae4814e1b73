package digitalocean_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
)

func TestListFinishesOnceStartedThoughReReadsAreFull(t *testing.T) {
	do := fakedo.New(fakedo.Options{BootDelay: fakedo.NoDelay, RateLimits: fakedo.RateLimits{Disabled: true}})
	if err := do.Start(); err != nil {
		t.Fatal(err)
	}
	defer do.Close()
	const token = "dop_v1_list-test"
	do.AddAccount(token, fakedo.AccountOptions{DropletLimit: 300})
	for i := range 250 { // two pages of 200
		do.CreateDropletOutOfBand(token, godo.DropletCreateRequest{Name: fmt.Sprintf("d-%d", i), Region: "nyc1",
			Size: "s-1vcpu-1gb", Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}, Tags: []string{"t"}})
	}
	// Budget 9 a minute: re-reads may fill 6 of it, creates 8.
	client, err := digitalocean.NewClients(do.URL(), digitalocean.LimiterOptions{
		Limits: []digitalocean.RateLimit{{Requests: 10, Window: time.Minute}}, Headroom: 0.1}).For(token)
	if err != nil {
		t.Fatal(err)
	}
	resync := digitalocean.WithPriority(context.Background(), digitalocean.PriorityResync)
	for range 5 {
		if _, _, err := client.Droplets.Get(resync, 1); err != nil && !digitalocean.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	// The first page takes the last re-read slot; the second must still go.
	got, err := digitalocean.DropletsOf(client).ListByTag(context.Background(), "t", digitalocean.PriorityResync)
	if err != nil || len(got) != 250 {
		t.Fatalf("list: %d droplets, %v; want all 250", len(got), err)
	}
	_, err = digitalocean.DropletsOf(client).ListByTag(context.Background(), "t", digitalocean.PriorityResync)
	if !digitalocean.IsHeldBack(err) {
		t.Errorf("a new list with the re-read share spent: %v, want it held back", err)
	}
}

// A list of summaries pages as ListByTag does, each droplet with its
// summary and nothing else.
func TestListSummariesByTagKeepsEachDropletsSummaryOnly(t *testing.T) {
	do := fakedo.New(fakedo.Options{BootDelay: fakedo.NoDelay, RateLimits: fakedo.RateLimits{Disabled: true}})
	if err := do.Start(); err != nil {
		t.Fatal(err)
	}
	defer do.Close()
	const token = "dop_v1_summaries-test"
	do.AddAccount(token, fakedo.AccountOptions{DropletLimit: 300})
	for i := range 250 { // two pages of 200
		do.CreateDropletOutOfBand(token, godo.DropletCreateRequest{Name: fmt.Sprintf("d-%d", i), Region: "nyc1",
			Size: "s-1vcpu-1gb", Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}, Tags: []string{"hfdo-install:a b"},
			IPv6: i%2 == 0})
	}
	do.CreateDropletOutOfBand(token, godo.DropletCreateRequest{Name: "other", Region: "nyc1",
		Size: "s-1vcpu-1gb", Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}, Tags: []string{"hfdo-install:a"}})
	client, err := digitalocean.NewClients(do.URL(), digitalocean.LimiterOptions{Disabled: true}).For(token)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	full, err := digitalocean.DropletsOf(client).ListByTag(ctx, "hfdo-install:a b", digitalocean.PriorityResync)
	if err != nil || len(full) != 250 {
		t.Fatalf("full list: %d droplets, %v", len(full), err)
	}
	summaries, err := digitalocean.DropletsOf(client).ListSummariesByTag(ctx, "hfdo-install:a b", digitalocean.PriorityResync)
	if err != nil || len(summaries) != len(full) {
		t.Fatalf("summaries: %d droplets, %v; want %d", len(summaries), err, len(full))
	}
	for i, s := range summaries {
		f := full[i]
		want := godo.Droplet{ID: f.ID, Name: f.Name, Status: f.Status, Created: f.Created, Tags: f.Tags, Networks: f.Networks,
			Region: &godo.Region{Slug: f.Region.Slug},
			Size:   &godo.Size{Slug: f.Size.Slug, PriceMonthly: f.Size.PriceMonthly, PriceHourly: f.Size.PriceHourly}}
		if !reflect.DeepEqual(s, want) {
			t.Fatalf("droplet %d's summary\n%+v\nwant\n%+v", f.ID, s, want)
		}
	}
}
