package digitalocean_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean/fake"
)

func TestListFinishesOnceStartedThoughReReadsAreFull(t *testing.T) {
	do := fake.New(fake.Options{BootDelay: fake.NoDelay, RateLimits: fake.RateLimits{Disabled: true}})
	if err := do.Start(); err != nil {
		t.Fatal(err)
	}
	defer do.Close()
	const token = "dop_v1_list-test"
	do.AddAccount(token, fake.AccountOptions{DropletLimit: 300})
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
	got, err := digitalocean.ListByTag(resync, client, "t")
	if err != nil || len(got) != 250 {
		t.Fatalf("list: %d droplets, %v; want all 250", len(got), err)
	}
	_, err = digitalocean.ListByTag(resync, client, "t")
	if !digitalocean.IsHeldBack(err) {
		t.Errorf("a new list with the re-read share spent: %v, want it held back", err)
	}
}
