package droplet

import (
	"testing"

	"github.com/digitalocean/godo"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/rancher/wrangler/v3/pkg/generic"
	"k8s.io/apimachinery/pkg/types"
)

const testInstallation = "install-1"

// byNameCache serves the droplet name index over a fixed set of Droplets.
type byNameCache struct {
	generic.CacheInterface[*v1alpha1.Droplet]
	all []*v1alpha1.Droplet
}

func (c byNameCache) GetByIndex(_, key string) ([]*v1alpha1.Droplet, error) {
	var out []*v1alpha1.Droplet
	for _, d := range c.all {
		if keys, _ := dropletNameKeys(d); len(keys) == 1 && keys[0] == key {
			out = append(out, d)
		}
	}
	return out, nil
}

// sentBy are the tags a create of installation's VM uid sends alone.
func sentBy(installation, uid string) []string {
	return digitalocean.SharedTags(digitalocean.DropletTags(installation, "ns", "vm", uid, nil))
}

func TestOnlyADropletThatCanBeTheCreatesIsTakenByName(t *testing.T) {
	d := deletingDroplet("uid-1", 0, "", "Creating")
	d.UID = "droplet-1"
	holder := deletingDroplet("uid-2", 7, "", "Created")
	holder.UID = "droplet-2"
	confirmedGone := func(id int) bool { return id == 8 }
	cases := []struct {
		name      string
		id        int
		tags      []string
		createTag bool
		want      bool
	}{
		{name: "this installation's, in this namespace", id: 1, tags: sentBy(testInstallation, "uid-1"), want: true},
		{name: "made by an older version, with this VM's tag", id: 1, tags: append(sentBy(testInstallation, "uid-1"), digitalocean.VMTag("uid-1")), want: true},
		{name: "another installation's", id: 1, tags: sentBy("install-2", "uid-1")},
		{name: "another namespace's", id: 1, tags: digitalocean.SharedTags(digitalocean.DropletTags(testInstallation, "other-ns", "vm", "uid-1", nil))},
		{name: "another VM's of the same name", id: 1, tags: append(sentBy(testInstallation, "uid-1"), digitalocean.VMTag("uid-2"))},
		{name: "a warm pool's", id: 1, tags: append(sentBy(testInstallation, "uid-1"), digitalocean.PoolTag("pool"))},
		{name: "another multi-create's", id: 1, tags: append(sentBy(testInstallation, "uid-1"), digitalocean.BatchTag("b"))},
		{name: "held by another Droplet of the name", id: 7, tags: sentBy(testInstallation, "uid-1")},
		{name: "confirmed deleted here, still listed", id: 8, tags: sentBy(testInstallation, "uid-1")},
		{name: "without the VM tag the create carried", id: 1, tags: sentBy(testInstallation, "uid-1"), createTag: true},
		{name: "with the VM tag the create carried", id: 1, tags: append(sentBy(testInstallation, "uid-1"), digitalocean.VMTag("uid-1")), createTag: true, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := d.DeepCopy()
			if tc.createTag {
				d.Status.CreateTag = digitalocean.VMTag("uid-1")
			}
			c := godo.Droplet{ID: tc.id, Name: "vm", Tags: tc.tags}
			if got := canBeOf(d, c, []*v1alpha1.Droplet{holder}, confirmedGone); got != tc.want {
				t.Errorf("canBeOf = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestACreateCarriesTheVMTagOnlyWhileAnotherDropletHasItsName(t *testing.T) {
	d := deletingDroplet("uid-1", 0, "", "Creating")
	d.UID = "droplet-1"
	h := &handler{droplets: dropletsWithCache{cache: byNameCache{all: []*v1alpha1.Droplet{d}}}}
	if tag := h.createTag(d); tag != "" {
		t.Errorf("alone with its name: create tag %q, want none", tag)
	}
	earlier := deletingDroplet("uid-0", 5, "", "Created")
	earlier.UID = types.UID("droplet-0")
	h.droplets = dropletsWithCache{cache: byNameCache{all: []*v1alpha1.Droplet{earlier, d}}}
	if tag := h.createTag(d); tag != digitalocean.VMTag("uid-1") {
		t.Errorf("beside a Droplet of the same name: create tag %q, want the VM's", tag)
	}
	d.Status.CreateTag = h.createTag(d)
	if sent := sentTags(d); len(sent) != len(sentBy(testInstallation, "uid-1"))+1 || sent[len(sent)-1] != d.Status.CreateTag {
		t.Errorf("sent tags %v, want the shared ones and the VM's", sent)
	}
}
