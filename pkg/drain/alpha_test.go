package drain

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"k8s.io/apimachinery/pkg/runtime"
)

// alphaDroplet and alphaKey are the alpha's objects of vm as it wrote them:
// its VM in spec.machine, DigitalOcean's answer in the status.
func alphaDroplet(vm string, id int) *v1alpha1.Droplet {
	d := &v1alpha1.Droplet{}
	d.Name, d.Spec.Machine = alpha.DropletName(vm), vm
	d.Status.Droplet = &runtime.RawExtension{Raw: fmt.Appendf(nil, `{"id":%d,"name":%q}`, id, alpha.DropletName(vm))}
	return d
}

func alphaKey(vm string, id int) *v1alpha1.Key {
	k := &v1alpha1.Key{}
	k.Name, k.Spec.Machine = alpha.KeyName(vm), vm
	k.Status.Key = &runtime.RawExtension{Raw: fmt.Appendf(nil, `{"id":%d,"name":%q}`, id, alpha.KeyName(vm))}
	return k
}

// The alpha tagged nothing and named alike what a VM of the same name in
// another namespace on the same token has: its droplets and keys are
// deleted by the IDs its objects record, under whichever token's account
// has them, and their namesakes stay.
func TestEmptyAccountDeletesWhatTheAlphaRecordsByID(t *testing.T) {
	const token, other = "dop_v1_alpha_account", "dop_v1_other_account"
	do := fakedo.New(fakedo.Options{BootDelay: fakedo.NoDelay, DeleteLag: 50 * time.Millisecond})
	if err := do.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(do.Close)
	do.AddAccount(token, fakedo.AccountOptions{})
	do.AddAccount(other, fakedo.AccountOptions{})
	droplet := func(name string, tags ...string) godo.Droplet {
		return do.CreateDropletOutOfBand(token, godo.DropletCreateRequest{Name: name, Region: "nyc1", Size: "s-1vcpu-1gb",
			Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}, Tags: tags})
	}
	// vm-1's VM is gone: its droplet was never taken over. vm-2's was: it
	// carries the installation's tag, and its key was retired.
	leftover := droplet(alpha.DropletName("vm-1"))
	takenOver := droplet(alpha.DropletName("vm-2"), digitalocean.InstallationTag("hf"))
	namesake := droplet(alpha.DropletName("vm-1"))

	client := fakeClient(t, do, token)
	key := func(name string) godo.Key { return registerKey(t, client, name) }
	leftoverKey := key(alpha.KeyName("vm-1"))
	namesakeKeys := []godo.Key{key(alpha.KeyName("vm-1")), key(alpha.KeyName("vm-2"))}

	objs := objects{
		droplets: []*v1alpha1.Droplet{alphaDroplet("vm-1", leftover.ID), alphaDroplet("vm-2", takenOver.ID)},
		keys: []*v1alpha1.Key{alphaKey("vm-1", leftoverKey.ID),
			// vm-2's Key of ours, its adopted key retired: its name is the alpha's.
			{Spec: v1alpha1.KeySpec{Name: alpha.KeyName("vm-2"), AdoptedKeyID: 99999}}},
	}
	rec := alphaRecordsOf(objs)
	opts := Options{APIURL: do.URL(), InstallationID: "hf", Poll: 20 * time.Millisecond}

	// Another account of the installation holds none of them.
	if e, err := emptyAccount(t.Context(), other, opts, objs.keys, rec); err != nil || e.droplets+e.keys != 0 {
		t.Errorf("under the other token: %+v, %v; want nothing deleted and no error", e, err)
	}
	e, err := emptyAccount(t.Context(), token, opts, objs.keys, rec)
	if err != nil {
		t.Fatal(err)
	}
	if e.droplets != 2 || e.keys != 1 {
		t.Errorf("deleted %d droplets and %d keys, want 2 and 1", e.droplets, e.keys)
	}
	slices.Sort(e.alphaDroplets)
	if !slices.Equal(e.alphaDroplets, []int{leftover.ID, takenOver.ID}) || !slices.Equal(e.alphaKeys, []int{leftoverKey.ID}) {
		t.Errorf("found the alpha's droplets %v and keys %v, want [%d %d] and [%d]", e.alphaDroplets, e.alphaKeys, leftover.ID, takenOver.ID, leftoverKey.ID)
	}
	var droplets, keys []int
	for _, d := range do.Droplets(token) {
		droplets = append(droplets, d.ID)
	}
	for _, k := range do.Keys(token) {
		keys = append(keys, k.ID)
	}
	if !slices.Equal(droplets, []int{namesake.ID}) {
		t.Errorf("droplets left: %v, want only the namesake %d", droplets, namesake.ID)
	}
	if want := []int{namesakeKeys[0].ID, namesakeKeys[1].ID}; !slices.Equal(keys, want) {
		t.Errorf("keys left: %v, want only the namesakes %v", keys, want)
	}
}

// An alpha record and no token to delete it with stops the drain.
func TestAlphaRecordsNeedAToken(t *testing.T) {
	if err := alphaRecordsOf(objects{}).needToken(); err != nil {
		t.Errorf("no records: %v", err)
	}
	rec := alphaRecordsOf(objects{droplets: []*v1alpha1.Droplet{alphaDroplet("vm-1", 0), alphaDroplet("vm-2", 42)}})
	if err := rec.needToken(); err == nil || err.Error() != "the original provisioner's Droplet of VM vm-2 records droplet 42 and no DigitalOcean token of this installation can be read (its Environments' token or token-secret, its Droplets' and Keys' token Secrets)" {
		t.Errorf("needToken: %v", err)
	}
}
