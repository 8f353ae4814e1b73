package droplet

import (
	"context"
	"reflect"
	"testing"

	"github.com/digitalocean/godo"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
)

// listedAll is a list answer's droplets as a listCache keeps them.
func listedAll(droplets map[int]*godo.Droplet) map[int]*listedDroplet {
	out := map[int]*listedDroplet{}
	for id, d := range droplets {
		l := listed(d)
		out[id] = &l
	}
	return out
}

// A listCache keeps droplets as listed keeps them from a list of summaries:
// the status read from one must be the one read from the whole droplet.
func TestListedKeepsWhatTheStatusIsReadFrom(t *testing.T) {
	do := fakedo.New(fakedo.Options{BootDelay: fakedo.NoDelay, RateLimits: fakedo.RateLimits{Disabled: true}})
	if err := do.Start(); err != nil {
		t.Fatal(err)
	}
	defer do.Close()
	do.AddAccount(fleetToken, fakedo.AccountOptions{})
	id := do.CreateDropletOutOfBand(fleetToken, godo.DropletCreateRequest{Name: "vm-0", Region: "nyc1",
		Size: "s-1vcpu-1gb", Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}, IPv6: true, PrivateNetworking: true,
		Tags: []string{"t"}}).ID
	client, err := digitalocean.NewClients(do.URL(), digitalocean.LimiterOptions{Disabled: true}).For(fleetToken)
	if err != nil {
		t.Fatal(err)
	}
	full, _, err := client.Droplets.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	summaries, err := digitalocean.DropletsOf(client).ListSummariesByTag(context.Background(), "t", digitalocean.PriorityResync)
	if err != nil || len(summaries) != 1 {
		t.Fatalf("list of summaries: %v, %v", summaries, err)
	}
	kept := listed(&summaries[0])
	fromFull, fromKept := &v1alpha1.Droplet{}, &v1alpha1.Droplet{}
	var h handler
	h.observeFields(fromFull, full)
	h.observeFields(fromKept, kept.droplet())
	if !reflect.DeepEqual(fromFull.Status, fromKept.Status) {
		t.Errorf("status read from the listed droplet\n%+v\nwant as from DigitalOcean's answer\n%+v", fromKept.Status, fromFull.Status)
	}
	if s := fromKept.Status; s.Status == "" || s.PublicIPv4 == "" || s.PrivateIPv4 == "" || s.PublicIPv6 == "" ||
		s.CreatedAt == "" || s.Region == "" || s.PriceHourly == "" || s.PriceMonthly == "" {
		t.Errorf("the fake's droplet lacks a field the status reads: %+v", s)
	}
	if kept.id != full.ID || kept.observedState != dropletState(full) {
		t.Errorf("listed id %d state %+v, want %d %+v", kept.id, kept.observedState, full.ID, dropletState(full))
	}
}

// A droplet not yet booted has no address: none is made up.
func TestListedDropletWithoutNetworks(t *testing.T) {
	l := listed(&godo.Droplet{ID: 7, Status: "new"})
	d := l.droplet()
	var h handler
	got := &v1alpha1.Droplet{}
	h.observeFields(got, d)
	if got.Status.Status != "new" || got.Status.PublicIPv4 != "" || got.Status.PrivateIPv4 != "" || got.Status.PublicIPv6 != "" {
		t.Errorf("status %+v", got.Status)
	}
}
