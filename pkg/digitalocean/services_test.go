package digitalocean_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshkey"
)

// What DigitalOcean does not know is gone: a read finds nothing and a
// delete is done; DeleteHeld tells it from a delete that found something,
// as a search across accounts needs; a 404 a caller must see passes on.
func TestServicesSayWhatA404Means(t *testing.T) {
	do := fakedo.New(fakedo.Options{BootDelay: fakedo.NoDelay, RateLimits: fakedo.RateLimits{Disabled: true}})
	if err := do.Start(); err != nil {
		t.Fatal(err)
	}
	defer do.Close()
	const token, other = "dop_v1_services", "dop_v1_services_other"
	do.AddAccount(token, fakedo.AccountOptions{})
	do.AddAccount(other, fakedo.AccountOptions{})
	clients := digitalocean.NewClients(do.URL(), digitalocean.LimiterOptions{Disabled: true})
	client, err := clients.For(token)
	if err != nil {
		t.Fatal(err)
	}
	otherClient, err := clients.For(other)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	droplets, keys := digitalocean.DropletsOf(client), digitalocean.KeysOf(client)

	made, err := droplets.Create(ctx, &godo.DropletCreateRequest{Name: "vm", Region: "nyc1", Size: "s-1vcpu-1gb",
		Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}}, digitalocean.PriorityCreate)
	if err != nil {
		t.Fatal(err)
	}
	if held, err := digitalocean.DropletsOf(otherClient).DeleteHeld(ctx, made.ID); held || err != nil {
		t.Fatalf("another account's delete: held %v, %v; want not held, no error", held, err)
	}
	if held, err := droplets.DeleteHeld(ctx, made.ID); !held || err != nil {
		t.Fatalf("the owner's delete: held %v, %v; want held", held, err)
	}
	if err := droplets.Delete(ctx, made.ID); err != nil {
		t.Errorf("deleting a droplet gone already: %v, want done", err)
	}
	if got, err := droplets.Get(ctx, made.ID, digitalocean.PriorityResync); got != nil || err != nil {
		t.Errorf("reading a droplet gone: %v, %v; want nothing, no error", got, err)
	}

	pair, err := sshkey.NewED25519("vm")
	if err != nil {
		t.Fatal(err)
	}
	key, err := keys.Create(ctx, "vm", pair.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := keys.Delete(ctx, key.ID, digitalocean.PriorityTidy); err != nil {
		t.Fatal(err)
	}
	if err := keys.Delete(ctx, key.ID, digitalocean.PriorityTidy); err != nil {
		t.Errorf("deleting a key gone already: %v, want done", err)
	}
	if err := keys.DeleteByFingerprint(ctx, key.Fingerprint, digitalocean.PriorityTidy); err != nil {
		t.Errorf("deleting a key gone already by fingerprint: %v, want done", err)
	}
	if _, err := keys.GetByFingerprint(ctx, key.Fingerprint); !digitalocean.IsNotFound(err) {
		t.Errorf("reading a key gone by fingerprint: %v, want its 404", err)
	}
	if err := digitalocean.TagsOf(client).Delete(ctx, "no-such-tag"); err != nil {
		t.Errorf("deleting a tag gone already: %v, want done", err)
	}
}

// Each call carries the priority of what it is, whatever its context says:
// with the tidy share of a token's budget spent, a key delete at
// PriorityTidy and a tag's delete wait, while a droplet's delete, a key's
// register and a re-read still go.
func TestServicesMarkEachCallsPriority(t *testing.T) {
	do := fakedo.New(fakedo.Options{BootDelay: fakedo.NoDelay, RateLimits: fakedo.RateLimits{Disabled: true}})
	if err := do.Start(); err != nil {
		t.Fatal(err)
	}
	defer do.Close()
	const token = "dop_v1_priorities"
	do.AddAccount(token, fakedo.AccountOptions{})
	// Budget 9 a minute: tidying may fill 4 of it, re-reads 6.
	client, err := digitalocean.NewClients(do.URL(), digitalocean.LimiterOptions{
		Limits: []digitalocean.RateLimit{{Requests: 10, Window: time.Minute}}, Headroom: 0.1}).For(token)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	droplets, keys, tags := digitalocean.DropletsOf(client), digitalocean.KeysOf(client), digitalocean.TagsOf(client)
	for i := range 4 {
		if err := tags.Delete(ctx, fmt.Sprintf("gone-%d", i)); err != nil {
			t.Fatalf("tag delete %d within the tidy share: %v", i, err)
		}
	}
	if err := tags.Delete(ctx, "one-more"); !digitalocean.IsHeldBack(err) {
		t.Errorf("a tag delete with the tidy share spent: %v, want it held back", err)
	}
	if err := keys.Delete(ctx, 1, digitalocean.PriorityTidy); !digitalocean.IsHeldBack(err) {
		t.Errorf("a key delete at PriorityTidy with its share spent: %v, want it held back", err)
	}
	if _, err := droplets.Get(ctx, 1, digitalocean.PriorityResync); err != nil {
		t.Errorf("a re-read within its share: %v", err)
	}
	pair, err := sshkey.NewED25519("vm")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := keys.Create(ctx, "vm", pair.PublicKey); err != nil {
		t.Errorf("a key's register within the create share: %v", err)
	}
	if err := droplets.Delete(ctx, 1); err != nil {
		t.Errorf("a droplet's delete: %v", err)
	}
}
