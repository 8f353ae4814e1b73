package crds_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/crds"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.Options{}) }

func TestChartCRDsAreGenerated(t *testing.T) {
	dir := t.TempDir()
	if err := crds.WriteYAML(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"droplets.yaml", "keys.yaml"} {
		want, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("..", "..", "chart", "hf-provisioner-digitalocean", "crds", name))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("chart crds/%s is stale: run go generate", name)
		}
	}
}

func TestDropletAndKeyRoundTripWithStatus(t *testing.T) {
	env := testenv.Require(t)
	objs, err := crds.Objects()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := env.InstallCRDs(ctx, objs...); err != nil {
		t.Fatal(err)
	}
	ns := env.NewNamespace(t)
	prov, err := provisioning.NewFactoryFromConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	droplets := prov.Provisioning().V1alpha1().Droplet()
	keys := prov.Provisioning().V1alpha1().Key()

	d, err := droplets.Create(&v1alpha1.Droplet{
		ObjectMeta: metav1.ObjectMeta{Name: "vm-1", Namespace: ns},
		Spec: v1alpha1.DropletSpec{VirtualMachine: "vm-1", Name: "vm-1", Region: "nyc1", Size: "s-1vcpu-1gb",
			Image: "ubuntu-22-04-x64", KeyRefs: []string{"vm-1"}, IPv6: true, Tags: []string{"a:b"},
			TokenSecretRef: v1alpha1.SecretKeyRef{Name: "tok", Key: "token"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	k, err := keys.Create(&v1alpha1.Key{
		ObjectMeta: metav1.ObjectMeta{Name: "vm-1", Namespace: ns},
		Spec:       v1alpha1.KeySpec{Name: "k", PublicKeySecretRef: v1alpha1.SecretKeyRef{Name: "vm-1-ssh", Key: "public_key"}},
	})
	if err != nil {
		t.Fatal(err)
	}

	d.Status.DropletID = 42
	d.Status.Status = "active"
	v1alpha1.Ready.True(d)
	v1alpha1.Ready.Reason(d, "Active")
	// Status written on the main resource is ignored once the status subresource exists.
	if _, err := droplets.Update(d.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	got, err := droplets.Get(ns, "vm-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.DropletID != 0 {
		t.Fatalf("status changed through the main resource: %+v", got.Status)
	}
	got.Status = d.Status
	if _, err := droplets.UpdateStatus(got); err != nil {
		t.Fatal(err)
	}
	got, err = droplets.Get(ns, "vm-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.DropletID != 42 || !v1alpha1.Ready.IsTrue(got) || got.Spec.Region != "nyc1" || !got.Spec.IPv6 {
		t.Errorf("read back %+v", got)
	}

	k.Status.KeyID = 7
	k.Status.Fingerprint = "aa:bb"
	if _, err := keys.UpdateStatus(k); err != nil {
		t.Fatal(err)
	}
	gotKey, err := keys.Get(ns, "vm-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if gotKey.Status.KeyID != 7 || gotKey.Spec.PublicKeySecretRef.Name != "vm-1-ssh" {
		t.Errorf("read back %+v", gotKey)
	}
}

// Install goes through wrangler's own conversion, not Objects: the printer
// columns, the wide MESSAGE included, must survive it.
func TestInstallKeepsPrinterColumns(t *testing.T) {
	env := testenv.Require(t)
	if err := crds.Install(context.Background(), env.Config()); err != nil {
		t.Fatal(err)
	}
	client, err := apiextclient.NewForConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"droplets.provisioning.hobbyfarm.io", "keys.provisioning.hobbyfarm.io"} {
		crd, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		priority := map[string]int32{}
		for _, col := range crd.Spec.Versions[0].AdditionalPrinterColumns {
			priority[col.Name] = col.Priority
		}
		if p, ok := priority["State"]; !ok || p != 0 {
			t.Errorf("%s: State column %v (priority %d), want a default one", name, ok, p)
		}
		if priority["Message"] != 1 {
			t.Errorf("%s: Message column priority %d, want 1 (-o wide)", name, priority["Message"])
		}
	}
}

// TestAlphaRecordsAreKeptUnpruned: replacing the original provisioner's
// CRDs with these must not prune the records its droplets and keys are
// taken over by.
func TestAlphaRecordsAreKeptUnpruned(t *testing.T) {
	objs, err := crds.Objects()
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string][][]string{
		"droplets.provisioning.hobbyfarm.io": {{"spec", "droplet"}, {"status", "droplet"}, {"spec", "machine"}, {"status", "retries"}},
		"keys.provisioning.hobbyfarm.io":     {{"spec", "key"}, {"status", "key"}, {"spec", "machine"}, {"spec", "secret"}, {"status", "retries"}},
	}
	for _, crd := range objs {
		for _, path := range kept[crd.Name] {
			props := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
			for _, name := range path {
				p, ok := props.Properties[name]
				if !ok {
					t.Fatalf("%s: the schema lacks %v, so the apiserver would prune the original provisioner's record", crd.Name, path)
				}
				props = &p
			}
			if props.Type == "object" && (props.XPreserveUnknownFields == nil || !*props.XPreserveUnknownFields) {
				t.Errorf("%s: %v is an object without x-kubernetes-preserve-unknown-fields: its contents would be pruned", crd.Name, path)
			}
		}
		if crd.Name == "warmpools.provisioning.hobbyfarm.io" {
			if _, ok := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["droplet"].Properties["adoptedDropletID"]; ok {
				t.Error("a warm pool's droplet template offers adoptedDropletID, which means nothing there")
			}
		}
	}
}
