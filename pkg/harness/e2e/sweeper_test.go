package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshkey"
)

func TestOrphansAreSweptAndNothingElse(t *testing.T) {
	w := newWorld(t, worldOptions{sweepInterval: 500 * time.Millisecond, orphanGrace: time.Millisecond})
	env := w.standardEnv("do-env")
	w.createVM("alive", env, "ubuntu")
	w.waitRunning("alive")

	outOfBand := func(name string, tags []string) int {
		return w.do.CreateDropletOutOfBand(testToken, godo.DropletCreateRequest{
			Name: name, Region: "nyc1", Size: "s-1vcpu-1gb", Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}, Tags: tags,
		}).ID
	}
	// The installation ID defaults to the namespace.
	orphan := outOfBand("ghost", digitalocean.DropletTags(w.ns, w.ns, "ghost", "uid-of-a-deleted-vm", nil))
	foreign := outOfBand("someone-elses", []string{"web"})
	otherInstall := outOfBand("other-install", digitalocean.DropletTags("other-installation", "other-ns", "ghost", "uid-elsewhere", nil))

	client, err := digitalocean.NewClients(w.do.URL(), digitalocean.LimiterOptions{}).For(testToken)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := sshkey.NewED25519("ghost")
	if err != nil {
		t.Fatal(err)
	}
	orphanKey, _, err := client.Keys.Create(context.Background(), &godo.KeyCreateRequest{Name: digitalocean.KeyName(w.ns, "ghost"), PublicKey: pair.PublicKey})
	if err != nil {
		t.Fatal(err)
	}

	w.eventually(30*time.Second, "orphans swept", func() string {
		ids := map[int]bool{}
		for _, d := range w.do.Droplets(testToken) {
			ids[d.ID] = true
		}
		keys := map[int]bool{}
		for _, k := range w.do.Keys(testToken) {
			keys[k.ID] = true
		}
		if ids[orphan] || keys[orphanKey.ID] {
			return fmt.Sprintf("orphan droplet present %v, orphan key present %v", ids[orphan], keys[orphanKey.ID])
		}
		return ""
	})
	ids := map[int]bool{}
	for _, d := range w.do.Droplets(testToken) {
		ids[d.ID] = true
	}
	if !ids[foreign] || !ids[otherInstall] || !ids[w.droplet("alive").Status.DropletID] {
		t.Errorf("the sweep deleted what is not its own: foreign %v, other installation %v, live VM %v",
			ids[foreign], ids[otherInstall], ids[w.droplet("alive").Status.DropletID])
	}
	// The live VM's own key may be there, or deleted already since its droplet exists.
	for _, k := range w.do.Keys(testToken) {
		if k.Name != digitalocean.KeyName(w.ns, "alive") {
			t.Errorf("key %d %q left, want at most the live VM's", k.ID, k.Name)
		}
	}
}
