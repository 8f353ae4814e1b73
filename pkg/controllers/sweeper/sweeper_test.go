package sweeper

import (
	"testing"

	"github.com/digitalocean/godo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
)

// A droplet made by a create sent alone carries no tag naming its VM: while
// its Droplet waits for the create's answer, the sweep knows it by its name
// alone, and sweeps it once that VM is gone.
func TestADropletMadeAloneIsJudgedByTheVMsOfItsName(t *testing.T) {
	made := func(namespace string) godo.Droplet {
		return godo.Droplet{ID: 42, Name: "vm-a",
			Tags: digitalocean.SharedTags(digitalocean.DropletTags("inst", namespace, "vm-a", "vm-uid", nil))}
	}
	r := records{byID: map[int][]string{}, byBatchName: map[string]string{},
		byName: map[string][]string{"vm-a": {"vm-uid"}}, namespace: digitalocean.NamespaceTag("ns")}
	if r.orphaned(made("ns"), map[string]bool{"vm-uid": true}) {
		t.Error("swept a droplet whose create's VM lives")
	}
	if !r.orphaned(made("ns"), map[string]bool{"another-vm": true}) {
		t.Error("kept a droplet made alone whose VM is gone")
	}
	if r.orphaned(made("another-ns"), map[string]bool{}) {
		t.Error("swept another namespace's droplet")
	}
}
