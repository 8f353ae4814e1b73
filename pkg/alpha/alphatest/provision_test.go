package alphatest

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshprobe"
	"golang.org/x/crypto/ssh"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A provisioned VM reads back with exactly what the alpha left: its
// finalizer, secret_name and status on the VM; its Secret, Key and
// Droplet, owned by the VM through baaah's apply; a droplet and key at
// DigitalOcean with its names and no tags; and the Secret's key logs in.
func TestProvisionLeavesWhatTheAlphaLeft(t *testing.T) {
	w := newWorld(t, sharedEnv(t), newFake(t))
	p := w.provision("vm-1", VMOptions{})

	vm := w.get(vmsResource, "vm-1")
	if got := vm.GetFinalizers(); !slices.Equal(got, []string{alpha.VMFinalizer}) {
		t.Errorf("VM finalizers %v", got)
	}
	if got := str(vm, "spec", "secret_name"); got != "vm-1-droplet-keys" {
		t.Errorf("VM secret_name %q", got)
	}
	wantStatus := map[string]string{"status": string(hfv1.VmStatusRunning), "public_ip": p.PublicIP,
		"private_ip": p.PrivateIP, "hostname": "vm-1-droplet", "environment_id": "env"}
	for field, want := range wantStatus {
		if got := str(vm, "status", field); got != want || want == "" {
			t.Errorf("VM status.%s = %q, want %q", field, got, want)
		}
	}
	if allocated, _, _ := unstructured.NestedBool(vm.Object, "status", "allocated"); !allocated {
		t.Error("VM status.allocated lost: only the alpha's status fields may be written")
	}

	secret := w.get(secretsResource, p.SecretName)
	checkOwnedByVM(t, secret, vm)
	if got := str(secret, "type"); got != "Opaque" {
		t.Errorf("Secret type %q", got)
	}
	data := secretData(t, secret)
	if !slices.Equal(sortedKeys(data), []string{"password", "private_key", "public_key"}) {
		t.Errorf("Secret data keys %v", sortedKeys(data))
	}
	pub, _, _, rest, err := ssh.ParseAuthorizedKey([]byte(data["public_key"]))
	if err != nil || len(rest) != 0 || pub.Type() != ssh.KeyAlgoRSA || data["public_key"][len(data["public_key"])-1] != '\n' {
		t.Errorf("public_key %q is not one authorized_keys line of an RSA key (%v)", data["public_key"], err)
	}
	if string(p.PrivateKeyPEM) != data["private_key"] || !strings.HasPrefix(data["private_key"], "-----BEGIN RSA PRIVATE KEY-----") {
		t.Errorf("private_key is not the PKCS #1 key Provision returned")
	}

	key := w.get(keysResource, p.KeyName)
	checkOwnedByVM(t, key, vm)
	if got := key.GetFinalizers(); !slices.Equal(got, []string{alpha.KeyFinalizer}) {
		t.Errorf("Key finalizers %v", got)
	}
	wantKeySpec := map[string]any{"machine": "vm-1", "secret": "vm-1-droplet-keys",
		"key": map[string]any{"name": "vm-1-droplet-key", "public_key": data["public_key"]}}
	if !reflect.DeepEqual(key.Object["spec"], wantKeySpec) {
		t.Errorf("Key spec %v", key.Object["spec"])
	}
	fingerprint := ssh.FingerprintLegacyMD5(pub)
	if num(key, "status", "key", "id") != int64(p.KeyID) || str(key, "status", "key", "fingerprint") != fingerprint ||
		str(key, "status", "key", "name") != "vm-1-droplet-key" {
		t.Errorf("Key status.key %v, want id %d fingerprint %s", key.Object["status"], p.KeyID, fingerprint)
	}
	checkConditions(t, key, []string{"DigitaloceanKeyCreated=true"})

	droplet := w.get(dropletsResource, p.DropletName)
	checkOwnedByVM(t, droplet, vm)
	if got := droplet.GetFinalizers(); !slices.Equal(got, []string{alpha.DropletFinalizer}) {
		t.Errorf("Droplet finalizers %v", got)
	}
	wantRequest := map[string]any{"name": "vm-1-droplet", "region": "nyc1", "size": "s-1vcpu-1gb",
		"image": "ubuntu-22-04-x64", "ssh_keys": []any{fingerprint}, "backups": false, "ipv6": false,
		"private_networking": false, "monitoring": false, "tags": nil}
	if !reflect.DeepEqual(droplet.Object["spec"], map[string]any{"machine": "vm-1", "droplet": wantRequest}) {
		t.Errorf("Droplet spec %v", droplet.Object["spec"])
	}
	if num(droplet, "status", "droplet", "id") != int64(p.DropletID) || str(droplet, "status", "droplet", "status") != "active" {
		t.Errorf("Droplet status.droplet %v", droplet.Object["status"])
	}
	checkConditions(t, droplet, []string{"DigitaloceanDropletExists=true", "DigitaloceanDropletReady=unknown"})
	if _, found, _ := unstructured.NestedFieldNoCopy(droplet.Object, "status", "retries"); !found {
		t.Error("Droplet status.retries absent: the alpha wrote null")
	}

	var droplets []string
	for _, d := range w.do.Droplets(testToken) {
		droplets = append(droplets, d.Name)
		if len(d.Tags) != 0 {
			t.Errorf("droplet %s has tags %v: the alpha set none", d.Name, d.Tags)
		}
	}
	if !slices.Equal(droplets, []string{"vm-1-droplet"}) {
		t.Errorf("droplets at DigitalOcean %v", droplets)
	}
	if keys := w.keysNamed("vm-1-droplet-key"); len(keys) != 1 || keys[p.KeyID] != fingerprint {
		t.Errorf("keys named vm-1-droplet-key %v, want only %d (%s)", keys, p.KeyID, fingerprint)
	}
	if details, _ := w.do.Details(testToken, p.DropletID); !slices.Equal(details.SSHKeyIDs, []int{p.KeyID}) {
		t.Errorf("droplet made with keys %v, want [%d]", details.SSHKeyIDs, p.KeyID)
	}
	if reason := w.login(p, p.PrivateKeyPEM); reason != sshprobe.ReasonLoggedIn {
		t.Errorf("login with the Secret's key: %s", reason)
	}
}

// With SecretRewritten the Secret and spec.key hold a new pair the droplet
// refuses, while status.key and the droplet keep the first.
func TestSecretRewrittenIsRefusedByTheDroplet(t *testing.T) {
	w := newWorld(t, sharedEnv(t), newFake(t))
	p := w.provision("vm-1", VMOptions{SecretRewritten: true})

	data := secretData(t, w.get(secretsResource, p.SecretName))
	if data["private_key"] != string(p.PrivateKeyPEM) || string(p.PrivateKeyPEM) == string(p.DropletPrivateKeyPEM) {
		t.Fatal("the Secret does not hold a second pair")
	}
	key := w.get(keysResource, p.KeyName)
	if got := str(key, "spec", "key", "public_key"); got != data["public_key"] {
		t.Errorf("Key spec.key.public_key is not the Secret's")
	}
	secretFingerprint := fingerprintOf(t, data["public_key"])
	if got := str(key, "status", "key", "fingerprint"); got == secretFingerprint || num(key, "status", "key", "id") != int64(p.KeyID) {
		t.Errorf("Key status.key %v should record the first pair's key %d", key.Object["status"], p.KeyID)
	}
	record := appliedOf(t, w.get(secretsResource, p.SecretName))
	if got := record["data"].(map[string]any)["public_key"].(string); got[:64] != base64.StdEncoding.EncodeToString([]byte(data["public_key"]))[:64] {
		t.Error("the Secret's apply record is not of the rewritten Secret")
	}
	keyRecord := appliedOf(t, key)
	recorded := keyRecord["spec"].(map[string]any)["key"].(map[string]any)["public_key"].(string)
	if recorded[:64] != data["public_key"][:64] || keyRecord["status"].(map[string]any)["key"] == nil {
		t.Errorf("the Key's apply record is not the Key as read with the new spec.key: %v", keyRecord)
	}
	if keys := w.keysNamed(p.KeyName); len(keys) != 1 {
		t.Errorf("keys named %s: %v", p.KeyName, keys)
	}

	if reason := w.login(p, p.PrivateKeyPEM); reason != sshprobe.ReasonKeyRefused {
		t.Errorf("login with the Secret's key: %s, want %s", reason, sshprobe.ReasonKeyRefused)
	}
	if reason := w.login(p, p.DropletPrivateKeyPEM); reason != sshprobe.ReasonLoggedIn {
		t.Errorf("login with the first pair: %s", reason)
	}
}

// DuplicateKey leaves a second DigitalOcean key of the Key's name that no
// object records: of a lost earlier pair alone, of the Secret's pair with
// SecretRewritten.
func TestDuplicateKeyIsUnrecorded(t *testing.T) {
	w := newWorld(t, sharedEnv(t), newFake(t))
	for _, tc := range []struct {
		vm              string
		opts            VMOptions
		duplicateSecret bool // the duplicate is of the Secret's pair
		loginReason     string
	}{
		{"vm-dup", VMOptions{DuplicateKey: true}, false, sshprobe.ReasonLoggedIn},
		{"vm-dup-rewritten", VMOptions{DuplicateKey: true, SecretRewritten: true}, true, sshprobe.ReasonKeyRefused},
	} {
		t.Run(tc.vm, func(t *testing.T) {
			p := w.provision(tc.vm, tc.opts)
			keys := w.keysNamed(p.KeyName)
			if len(keys) != 2 || keys[p.KeyID] == "" || keys[p.DuplicateKeyID] == "" {
				t.Fatalf("keys named %s: %v, want recorded %d and duplicate %d", p.KeyName, keys, p.KeyID, p.DuplicateKeyID)
			}
			key := w.get(keysResource, p.KeyName)
			if num(key, "status", "key", "id") != int64(p.KeyID) {
				t.Errorf("status.key records %d, want %d", num(key, "status", "key", "id"), p.KeyID)
			}
			secretKey := secretData(t, w.get(secretsResource, p.SecretName))["public_key"]
			if got := str(key, "spec", "key", "public_key"); got != secretKey {
				t.Error("Key spec.key.public_key is not the Secret's")
			}
			secretFingerprint := fingerprintOf(t, secretKey)
			if got := keys[p.DuplicateKeyID] == secretFingerprint; got != tc.duplicateSecret {
				t.Errorf("duplicate key is of the Secret's pair: %v, want %v", got, tc.duplicateSecret)
			}
			if reason := w.login(p, p.PrivateKeyPEM); reason != tc.loginReason {
				t.Errorf("login with the Secret's key: %s, want %s", reason, tc.loginReason)
			}
		})
	}
}

// Two HobbyFarm namespaces on one token may both have a VM of one name:
// DigitalOcean then has two droplets and two keys named alike.
func TestVMsNamedAlikeInTwoNamespaces(t *testing.T) {
	env, do := sharedEnv(t), newFake(t)
	a, b := newWorld(t, env, do), newWorld(t, env, do)
	pa, pb := a.provision("vm-1", VMOptions{}), b.provision("vm-1", VMOptions{})
	if pa.DropletID == pb.DropletID || pa.KeyID == pb.KeyID {
		t.Fatalf("one droplet or key for two VMs: %+v %+v", pa, pb)
	}
	n := 0
	for _, d := range do.Droplets(testToken) {
		if d.Name == "vm-1-droplet" {
			n++
		}
	}
	if keys := a.keysNamed("vm-1-droplet-key"); n != 2 || len(keys) != 2 {
		t.Errorf("%d droplets and %d keys named alike, want 2 and 2", n, len(keys))
	}
}

func checkOwnedByVM(t *testing.T, obj, vm *unstructured.Unstructured) {
	t.Helper()
	refs := obj.GetOwnerReferences()
	if len(refs) != 1 || refs[0].UID != vm.GetUID() || refs[0].Kind != "VirtualMachine" || refs[0].APIVersion != "hobbyfarm.io/v1" ||
		refs[0].Controller == nil || !*refs[0].Controller || refs[0].BlockOwnerDeletion == nil || !*refs[0].BlockOwnerDeletion {
		t.Errorf("%s owner references %+v", obj.GetName(), refs)
	}
	labels := obj.GetLabels()
	if labels[alpha.VMLabel] != vm.GetName() || len(labels[applyHash]) != 40 || len(labels) != 2 {
		t.Errorf("%s labels %v", obj.GetName(), labels)
	}
	wantAnnotations := map[string]string{applySubContext: "", applyOwnerGVK: "hobbyfarm.io/v1, Kind=VirtualMachine",
		applyOwnerName: vm.GetName(), applyOwnerNS: vm.GetNamespace()}
	got := obj.GetAnnotations()
	for k, v := range wantAnnotations {
		if value, ok := got[k]; !ok || value != v {
			t.Errorf("%s annotation %s = %q, want %q", obj.GetName(), k, value, v)
		}
	}
	record := appliedOf(t, obj)
	if meta := record["metadata"].(map[string]any); meta["name"] != obj.GetName() || meta["creationTimestamp"] != nil {
		t.Errorf("%s apply record metadata %v", obj.GetName(), meta)
	}
	for _, m := range obj.GetManagedFields() {
		if m.Manager != alpha.FieldManager {
			t.Errorf("%s has fields of manager %q", obj.GetName(), m.Manager)
		}
	}
}

// checkConditions compares "type=status" of each condition, in order, and
// that each carries its update time.
func checkConditions(t *testing.T, obj *unstructured.Unstructured, want []string) {
	t.Helper()
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	var got []string
	for _, c := range conditions {
		c := c.(map[string]any)
		got = append(got, c["type"].(string)+"="+c["status"].(string))
		if c["lastUpdateTime"] == nil || c["lastTransitionTime"] != nil {
			t.Errorf("%s condition %v: lastUpdateTime only", obj.GetName(), c)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s conditions %v, want %v", obj.GetName(), got, want)
	}
}

func secretData(t *testing.T, secret *unstructured.Unstructured) map[string]string {
	t.Helper()
	raw, _, _ := unstructured.NestedStringMap(secret.Object, "data")
	out := map[string]string{}
	for k, v := range raw {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = string(b)
	}
	return out
}

func fingerprintOf(t *testing.T, authorizedKey string) string {
	t.Helper()
	pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(authorizedKey))
	if err != nil {
		t.Fatal(err)
	}
	return ssh.FingerprintLegacyMD5(pub)
}

// appliedOf decodes baaah's apply record of an object.
func appliedOf(t *testing.T, obj *unstructured.Unstructured) map[string]any {
	t.Helper()
	b, err := decodeApplied(obj.GetAnnotations()[applyApplied])
	if err != nil {
		t.Fatalf("%s: apply record: %v", obj.GetName(), err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func sortedKeys(m map[string]string) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
