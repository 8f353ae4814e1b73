package e2e

import (
	"fmt"
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/virtualmachine"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSharedKeyScopeCreatesTenPerRequest: with ssh_key_scope: environment
// every VM of the Environment logs in with one key pair, DigitalOcean holds
// one key, droplets are made up to ten per request, and deleting the VMs
// deletes every droplet (the key stays until the Environment goes). The
// key's registration is held until all droplets wait for it, so they go
// out together, and a third of the create answers are lost: the batch's tag
// must find those droplets, never make second ones.
func TestSharedKeyScopeCreatesTenPerRequest(t *testing.T) {
	w := newWorld(t, worldOptions{fake: fakedo.Options{SSH: true}})
	w.do.SetFaults(fakedo.Faults{Rules: map[string]fakedo.FaultRule{fakedo.RouteCreateDroplets: {DropResponseAfterApply: 0.3}}})
	keyHold := w.do.HoldBeforeApply(fakedo.RouteCreateKey)
	w.standardEnv("plain") // creates the templates
	env := w.createEnv(gargantuasim.Environment(w.ns, "shared",
		map[string]string{"region": "nyc1", "token-secret": tokenSecret, "ssh_key_scope": "environment"},
		map[string]map[string]string{"ubuntu": {"size": "s-1vcpu-1gb"}}))
	const n = 25
	var names []string
	for i := 0; i < n; i++ {
		names = append(names, fmt.Sprintf("s-%02d", i))
		w.createVM(names[i], env, "ubuntu")
	}
	w.eventually(60*time.Second, "every Droplet waiting for the shared key", func() string {
		for _, name := range names {
			d, err := w.droplets.Get(w.ns, name, metav1.GetOptions{})
			if err != nil || v1alpha1.Created.GetReason(d) != v1alpha1.ReasonWaitingForKey {
				return name + " is not waiting for its key"
			}
		}
		return ""
	})
	keyHold.Release()
	w.waitRunning(names...)

	shared := virtualmachine.SharedKeyName(env.Name)
	for _, name := range names {
		if vm := w.vm(name); vm.Spec.SecretName != shared {
			t.Errorf("%s: secret_name %q, want the shared %q", name, vm.Spec.SecretName, shared)
		}
	}
	w.loginWithSecret(names[0])
	w.loginWithSecret(names[n-1])
	if k := w.do.Keys(testToken); len(k) != 1 {
		t.Errorf("DigitalOcean holds %d keys, want the one shared key", len(k))
	}
	if d := w.do.Droplets(testToken); len(d) != n {
		t.Errorf("DigitalOcean holds %d droplets, want %d", len(d), n)
	}
	creates := w.do.RouteRequests(fakedo.RouteCreateDroplets)
	if creates < (n+9)/10 || creates > n/4 {
		t.Errorf("%d droplets made with %d create requests, want multi-creates (at least %d, at most %d)", n, creates, (n+9)/10, n/4)
	}
	t.Logf("%d droplets made with %d create requests", n, creates)

	for _, name := range names {
		if err := w.hf.VMs.Delete(w.ns, name, nil); err != nil {
			t.Fatal(err)
		}
	}
	w.eventually(60*time.Second, "droplets deleted", func() string {
		if d := len(w.do.Droplets(testToken)); d > 0 {
			return fmt.Sprintf("%d droplets left", d)
		}
		return ""
	})
	if k := len(w.do.Keys(testToken)); k != 1 {
		t.Errorf("%d keys after the VMs went, want the Environment's one", k)
	}
	if err := w.hf.Envs.Delete(w.ns, env.Name, nil); err != nil {
		t.Fatal(err)
	}
	// The garbage collector deletes the Key with its Environment; the Key's
	// finalizer deletes it in DigitalOcean.
	w.eventually(60*time.Second, "shared key deleted", func() string {
		if k := len(w.do.Keys(testToken)); k > 0 {
			return fmt.Sprintf("%d keys left", k)
		}
		if _, err := w.keys.Get(w.ns, shared, metav1.GetOptions{}); err == nil {
			return "Key object still there"
		}
		return ""
	})
}
