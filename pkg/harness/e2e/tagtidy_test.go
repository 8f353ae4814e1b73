package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// tidyWithin is how long the tag tidy may take in these tests: two
// listings a second apart after a second without deletes, and the deletes.
const tidyWithin = 60 * time.Second

// emptyTagsOfOurs are the tags of ours the fake holds with no droplet.
func (w *world) emptyTagsOfOurs() []string {
	var out []string
	for _, tag := range w.do.Tags(testToken) {
		if tag.Droplets == 0 && digitalocean.IsTidyTag(tag.Name, digitalocean.InstallationTag(w.ns)) {
			out = append(out, tag.Name)
		}
	}
	return out
}

func (w *world) waitNoEmptyTagsOfOurs(what string) {
	w.t.Helper()
	w.eventually(tidyWithin, what, func() string {
		if left := w.emptyTagsOfOurs(); len(left) > 0 {
			return fmt.Sprintf("%d empty tags of ours left, e.g. %s", len(left), left[0])
		}
		return ""
	})
}

// dropletTags are the live droplets' tags in the fake, by droplet ID.
func (w *world) dropletTags() map[int][]string {
	out := map[int][]string{}
	for _, d := range w.do.Droplets(testToken) {
		out[d.ID] = slices.Sorted(slices.Values(d.Tags))
	}
	return out
}

// TestEmptyTagsOfOursAreDeleted: VMs with keys of their own (a VM tag and
// a name tag each) and VMs sharing the Environment's key (made ten to a
// request, under a multi-create's tag), all in boot buckets, deleted in
// two waves: after each, no tag of ours is left empty, the tags of the
// droplets that stay are untouched, and no tag is deleted until the
// wave's droplet deletes are over.
func TestEmptyTagsOfOursAreDeleted(t *testing.T) {
	w := newWorld(t, worldOptions{tagTidyDelay: time.Second})
	plain := w.standardEnv("plain")
	shared := w.createEnv(gargantuasim.Environment(w.ns, "shared",
		map[string]string{"region": "nyc1", "token-secret": tokenSecret, "ssh_key_scope": "environment"},
		map[string]map[string]string{"ubuntu": {"size": "s-1vcpu-1gb"}}))
	var first, second []string
	// Each Environment's VMs: most go in the first wave, a few stay for the second.
	for _, group := range []struct {
		env         *hfv1.Environment
		prefix      string
		n, inSecond int
	}{{plain, "own", 6, 2}, {shared, "shared", 14, 3}} {
		for i := range group.n {
			name := fmt.Sprintf("%s-%02d", group.prefix, i)
			w.createVM(name, group.env, "ubuntu")
			if i < group.n-group.inSecond {
				first = append(first, name)
			} else {
				second = append(second, name)
			}
		}
	}
	w.waitRunning(append(slices.Clone(first), second...)...)
	if len(w.emptyTagsOfOurs()) != 0 {
		t.Fatalf("empty tags of ours while every VM runs: %v", w.emptyTagsOfOurs())
	}

	w.deleteWave(first, len(second))
	staying := w.dropletTags()
	w.waitNoEmptyTagsOfOurs("the first wave's tags deleted")
	for id, tags := range w.dropletTags() {
		if !slices.Equal(tags, staying[id]) {
			t.Errorf("droplet %d of a VM that stays: tags %v, were %v", id, tags, staying[id])
		}
	}

	w.deleteWave(second, 0)
	w.waitNoEmptyTagsOfOurs("the second wave's tags deleted")
	for _, tag := range w.do.Tags(testToken) {
		if digitalocean.IsTidyTag(tag.Name, digitalocean.InstallationTag(w.ns)) {
			t.Errorf("tag %s (%d droplets) left after every VM went", tag.Name, tag.Droplets)
		}
	}
}

// deleteWave deletes names, waits until DigitalOcean holds left droplets,
// and checks that no tag was deleted while droplets of the wave were.
func (w *world) deleteWave(names []string, left int) {
	w.t.Helper()
	began := time.Now()
	for _, name := range names {
		if err := w.hf.VMs.Delete(w.ns, name, &metav1.DeleteOptions{}); err != nil {
			w.t.Fatal(err)
		}
	}
	w.eventually(60*time.Second, "the wave's droplets deleted", func() string {
		if n := len(w.do.Droplets(testToken)); n != left {
			return fmt.Sprintf("%d droplets, want %d", n, left)
		}
		return ""
	})
	w.waitNoEmptyTagsOfOurs("the wave's tags deleted")
	var lastDropletDelete, firstTagDelete time.Time
	for _, r := range w.do.Requests() {
		if r.Time.Before(began) {
			continue
		}
		switch {
		case strings.HasPrefix(r.Pattern, "DELETE /v2/droplets") && r.Time.After(lastDropletDelete):
			lastDropletDelete = r.Time
		case r.Pattern == fakedo.RouteDeleteTag && firstTagDelete.IsZero():
			firstTagDelete = r.Time
		}
	}
	if firstTagDelete.IsZero() || !firstTagDelete.After(lastDropletDelete) {
		w.t.Errorf("first tag delete at %v, last droplet delete at %v: tags go only after the deletes", firstTagDelete, lastDropletDelete)
	}
}

// TestTagsLeftBehindAreDeletedAtStart: empty tags of ours that a crashed
// process or an earlier version left are deleted after the start; tags of
// other installations' boot buckets, tags of live droplets, and tags that
// are not ours stay.
func TestTagsLeftBehindAreDeletedAtStart(t *testing.T) {
	ours := []string{"hfdo-vm:uid-of-a-deleted-vm", "hfdo-vmname:gone", "hfdo-batch:0011223344556677",
		"hfdo-delete:8899aabbccddeeff", "hfdo-pool:uid-of-a-deleted-pool"}
	others := []string{"prod", "hfdo-boot:1700000000000-3:other-installation"}
	carried := "hfdo-vm:uid-of-a-droplet-someone-keeps"
	w := newWorld(t, worldOptions{tagTidyDelay: time.Second, beforeStart: func(w *world) {
		// A boot bucket of this installation's, opened long ago.
		ours = append(ours, digitalocean.BootTag(digitalocean.InstallationTag(w.ns), time.Now().Add(-time.Hour), 7))
		client, err := digitalocean.NewClients(w.do.URL(), digitalocean.LimiterOptions{}).For(testToken)
		if err != nil {
			t.Fatal(err)
		}
		for _, tag := range slices.Concat(ours, others) {
			if _, _, err := client.Tags.Create(context.Background(), &godo.TagCreateRequest{Name: tag}); err != nil {
				t.Fatal(err)
			}
		}
		w.do.CreateDropletOutOfBand(testToken, godo.DropletCreateRequest{Name: "kept", Region: "nyc1", Size: "s-1vcpu-1gb",
			Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}, Tags: []string{carried}})
		w.standardEnv("do-env") // names the token, as an installation's Environment does
	}})
	tagDroplets := func() map[string]int {
		have := map[string]int{}
		for _, tag := range w.do.Tags(testToken) {
			have[tag.Name] = tag.Droplets
		}
		return have
	}
	w.eventually(tidyWithin, "the left-behind tags deleted", func() string {
		have := tagDroplets()
		for _, tag := range ours {
			if _, ok := have[tag]; ok {
				return tag + " still there"
			}
		}
		return ""
	})
	have := tagDroplets()
	for _, tag := range others {
		if _, ok := have[tag]; !ok {
			t.Errorf("tag %s, not ours, was deleted", tag)
		}
	}
	if have[carried] != 1 {
		t.Errorf("tag %s of a live droplet: %d droplets, want 1", carried, have[carried])
	}
}

// TestPoolTagsGoWithTheirPool: a warm pool's tag and its members'
// identity tags, one of them on a droplet a VM took, are deleted once the
// VM and the pool's Environment are gone, though no Environment names the
// token any more.
func TestPoolTagsGoWithTheirPool(t *testing.T) {
	w, env := poolWorld(t, worldOptions{tagTidyDelay: time.Second}, 2, true)
	w.waitPoolReady(2)
	w.createVM("claimer", env, "ubuntu")
	w.waitRunning("claimer")
	if d := w.droplet("claimer"); d.Spec.ClaimedDropletID == 0 {
		t.Fatalf("claimer made its own droplet, not a pool's: %+v", d.Spec)
	}
	if err := w.hf.VMs.Delete(w.ns, "claimer", &metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pooled", "plain"} {
		if err := w.hf.Envs.Delete(w.ns, name, &metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w.waitFakeEmpty(drainWithin, "the pool drained and the VM's droplet deleted")
	w.eventually(tidyWithin, "every tag of ours deleted", func() string {
		for _, tag := range w.do.Tags(testToken) {
			if digitalocean.IsTidyTag(tag.Name, digitalocean.InstallationTag(w.ns)) {
				return fmt.Sprintf("tag %s (%d droplets) left", tag.Name, tag.Droplets)
			}
		}
		return ""
	})
}
