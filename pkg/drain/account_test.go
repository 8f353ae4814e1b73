package drain

import (
	"testing"
	"time"

	"github.com/digitalocean/godo"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshkey"
)

// An account other installations share keeps their droplets and keys: a drain
// takes only what carries its installation's tag, and the keys its Keys name.
func TestEmptyAccountTakesOnlyThisInstallations(t *testing.T) {
	const token = "dop_v1_shared_account"
	do := fakedo.New(fakedo.Options{BootDelay: fakedo.NoDelay, DeleteLag: 50 * time.Millisecond})
	if err := do.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(do.Close)
	do.AddAccount(token, fakedo.AccountOptions{})
	droplet := func(name, installation string) {
		do.CreateDropletOutOfBand(token, godo.DropletCreateRequest{Name: name, Region: "nyc1", Size: "s-1vcpu-1gb",
			Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}, Tags: []string{digitalocean.InstallationTag(installation)}})
	}
	droplet("ours-1", "hf")
	droplet("ours-2", "hf")
	droplet("theirs", "hf-2")

	client := fakeClient(t, do, token)
	key := func(name string) godo.Key { return registerKey(t, client, name) }
	byID, byName := key(digitalocean.KeyName("hf", "vm-1")), key(digitalocean.KeyName("hf", "vm-2"))
	// Namespace hf-2's VM vm-1 has a key name that starts like ours.
	key(digitalocean.KeyName("hf-2", "vm-1"))
	keys := []*v1alpha1.Key{
		{Spec: v1alpha1.KeySpec{Name: byID.Name}, Status: v1alpha1.KeyStatus{KeyID: byID.ID}},
		// A create whose answer was lost: no ID on record, only the name.
		{Spec: v1alpha1.KeySpec{Name: byName.Name}},
	}

	e, err := emptyAccount(t.Context(), token, Options{APIURL: do.URL(), InstallationID: "hf", Poll: 20 * time.Millisecond}, keys, alphaRecords{})
	if err != nil {
		t.Fatal(err)
	}
	if e.droplets != 2 || e.keys != 2 {
		t.Errorf("deleted %d droplets and %d keys, want 2 and 2", e.droplets, e.keys)
	}
	if left := do.Droplets(token); len(left) != 1 || left[0].Name != "theirs" {
		t.Errorf("droplets left: %v, want only the other installation's", left)
	}
	if left := do.Keys(token); len(left) != 1 || left[0].Name != digitalocean.KeyName("hf-2", "vm-1") {
		t.Errorf("keys left: %v, want only namespace hf-2's", left)
	}
}

// fakeClient is an unlimited DigitalOcean client of token at do.
func fakeClient(t *testing.T, do *fakedo.Server, token string) *godo.Client {
	t.Helper()
	client, err := digitalocean.NewClients(do.URL(), digitalocean.LimiterOptions{Disabled: true}).For(token)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// registerKey registers a new key pair's public key as name.
func registerKey(t *testing.T, client *godo.Client, name string) godo.Key {
	t.Helper()
	pair, err := sshkey.NewED25519(name)
	if err != nil {
		t.Fatal(err)
	}
	k, _, err := client.Keys.Create(t.Context(), &godo.KeyCreateRequest{Name: name, PublicKey: pair.PublicKey})
	if err != nil {
		t.Fatal(err)
	}
	return *k
}
