package alpha

import (
	"testing"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
)

func raw(s string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(s)} }

func TestDropletRecordReadsTheAlphasRawObjects(t *testing.T) {
	d := &v1alpha1.Droplet{}
	d.Spec.Machine = "vm-1"
	d.Spec.Request = raw(`{"name":"vm-1-droplet","region":"nyc1","size":"s-1vcpu-1gb","image":"ubuntu-22-04-x64","ssh_keys":["aa:bb"],"tags":null}`)
	d.Status.Droplet = raw(`{"id":4242,"name":"vm-1-droplet","region":{"slug":"nyc3"},"size_slug":"s-2vcpu-2gb","image":{"id":1,"slug":"debian-12-x64"}}`)
	got := DropletOf(d)
	want := Droplet{ID: 4242, Name: "vm-1-droplet", Region: "nyc3", Size: "s-2vcpu-2gb", Image: "debian-12-x64"}
	if got != want {
		t.Fatalf("DropletOf = %+v, want %+v (DigitalOcean's answer wins over the request)", got, want)
	}
	if !IsDroplet(d) {
		t.Fatal("an object with spec.machine is the alpha's")
	}
}

func TestDropletRecordWithoutAnAnswerHasNoID(t *testing.T) {
	d := &v1alpha1.Droplet{}
	d.Spec.Machine = "vm-1"
	d.Spec.Request = raw(`{"name":"vm-1-droplet","region":"nyc1","image":"ubuntu-22-04-x64"}`)
	d.Status.Droplet = raw(`not json`)
	if got := DropletOf(d); got.ID != 0 || got.Name != "vm-1-droplet" || got.Region != "nyc1" || got.Image != "ubuntu-22-04-x64" {
		t.Fatalf("DropletOf = %+v, want the request's fields and no ID", got)
	}
	if IsDroplet(&v1alpha1.Droplet{}) {
		t.Fatal("an object without spec.machine is ours")
	}
}

func TestKeyRecord(t *testing.T) {
	k := &v1alpha1.Key{}
	k.Spec.Machine = "vm-1"
	k.Spec.Request = raw(`{"name":"vm-1-droplet-key","public_key":"ssh-rsa AAAA"}`)
	k.Status.Key = raw(`{"id":99,"name":"vm-1-droplet-key","fingerprint":"3b:16","public_key":"ssh-rsa AAAA"}`)
	if got := KeyOf(k); got != (Key{ID: 99, Name: "vm-1-droplet-key", Fingerprint: "3b:16", PublicKey: "ssh-rsa AAAA"}) {
		t.Fatalf("KeyOf = %+v", got)
	}
}
