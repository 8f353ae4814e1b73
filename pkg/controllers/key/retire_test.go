package key

import (
	"context"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/deletepause"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/finalizer"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshkey"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
)

const retireToken = "dop_v1_retire-test"

// statusWriter is a Key controller whose status writes always succeed.
type statusWriter struct{ provcontrollers.KeyController }

func (statusWriter) UpdateStatus(k *v1alpha1.Key) (*v1alpha1.Key, error) { return k.DeepCopy(), nil }
func (statusWriter) EnqueueAfter(string, string, time.Duration)          {}

// retireWorld is a Key handler over a fake DigitalOcean, with the VM's
// Droplet and Secrets in its caches.
type retireWorld struct {
	t       *testing.T
	do      *fakedo.Server
	h       *handler
	droplet *v1alpha1.Droplet
	key     *v1alpha1.Key
}

func newRetireWorld(t *testing.T) *retireWorld {
	t.Helper()
	do := fakedo.New(fakedo.Options{BootDelay: fakedo.NoDelay, RateLimits: fakedo.RateLimits{Disabled: true}})
	if err := do.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(do.Close)
	do.AddAccount(retireToken, fakedo.AccountOptions{})
	pair, err := sshkey.NewED25519("vm")
	if err != nil {
		t.Fatal(err)
	}
	w := &retireWorld{t: t, do: do,
		droplet: &v1alpha1.Droplet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm"}, Spec: v1alpha1.DropletSpec{KeyRefs: []string{"vm"}}},
		key: &v1alpha1.Key{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm", UID: "key-uid",
			Finalizers: []string{finalizer.Of(finalizer.KeyCleanupHandler)}},
			Spec: v1alpha1.KeySpec{Name: "vm", PublicKeySecretRef: v1alpha1.SecretKeyRef{Name: "vm-ssh", Key: sshkey.PublicKeyField},
				TokenSecretRef: v1alpha1.SecretKeyRef{Name: "token", Key: "token"}}}}
	secrets := testutil.NamedCache[*corev1.Secret]{Objs: map[string]*corev1.Secret{
		"vm-ssh": {Data: map[string][]byte{sshkey.PublicKeyField: []byte(pair.PublicKey)}},
		"token":  {Data: map[string][]byte{"token": []byte(retireToken)}},
	}}
	recorder := record.NewFakeRecorder(100)
	w.h = &handler{ctx: context.Background(), keys: statusWriter{}, secrets: secrets,
		droplets: testutil.NamedCache[*v1alpha1.Droplet]{Objs: map[string]*v1alpha1.Droplet{"vm": w.droplet}},
		vms:      testutil.NamedCache[*hfv1.VirtualMachine]{Objs: map[string]*hfv1.VirtualMachine{}},
		clients:  digitalocean.NewClients(do.URL(), digitalocean.LimiterOptions{Disabled: true}),
		recorder: recorder, pause: deletepause.New(time.Time{}), pauseDelay: time.Minute}
	w.h.withPass(recorder)
	return w
}

// sync runs one pass of the Key handler and keeps what it wrote.
func (w *retireWorld) sync() {
	w.t.Helper()
	k, err := w.h.sync("ns/vm", w.key)
	if err != nil {
		w.t.Fatal(err)
	}
	w.key = k
}

func (w *retireWorld) expect(step string, keyID bool, state string, liveKeys int) {
	w.t.Helper()
	if (w.key.Status.KeyID != 0) != keyID || w.key.Status.State != state || len(w.do.Keys(retireToken)) != liveKeys {
		w.t.Fatalf("%s: Key ID %d, state %q, %d keys in DigitalOcean; want an ID %v, %q, %d",
			step, w.key.Status.KeyID, w.key.Status.State, len(w.do.Keys(retireToken)), keyID, state, liveKeys)
	}
}

func TestRetiredKeyIsRegisteredAgainForANewCreate(t *testing.T) {
	w := newRetireWorld(t)
	w.sync()
	w.expect("before the droplet", true, v1alpha1.KeyStateActive, 1)
	fingerprint := w.key.Status.Fingerprint

	w.droplet.Status.DropletID = 7
	v1alpha1.Created.True(w.droplet)
	w.sync()
	w.expect("droplet created", false, v1alpha1.KeyStateRetired, 0)
	w.sync()
	w.expect("looked at again", false, v1alpha1.KeyStateRetired, 0)

	// The droplet has to be made again: the key is needed for that create.
	w.droplet.Status.DropletID = 0
	v1alpha1.Created.False(w.droplet)
	w.sync()
	w.expect("a create to come", true, v1alpha1.KeyStateActive, 1)
	if w.key.Status.Fingerprint != fingerprint {
		t.Errorf("registered again as %s, want the Secret's key %s", w.key.Status.Fingerprint, fingerprint)
	}
	if n := w.do.RequestCounts()[fakedo.RouteCreateKey+" 201"]; n != 2 {
		t.Errorf("%d key creates, want 2 (no lookup before a create)", n)
	}
}

func TestKeysOfDeletingDropletsAndSharedKeysAreNotRetired(t *testing.T) {
	w := newRetireWorld(t)
	w.sync()
	w.droplet.Status.DropletID = 7
	v1alpha1.Created.True(w.droplet)
	w.droplet.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	w.sync()
	w.expect("droplet being deleted", true, v1alpha1.KeyStateActive, 1)

	// A key shared by an Environment's droplets serves creates to come.
	w.droplet.DeletionTimestamp = nil
	w.droplet.Spec.KeyRefs = []string{"shared"}
	w.sync()
	w.expect("shared key", true, v1alpha1.KeyStateActive, 1)
}

// While an event's droplets are being deleted, no key is retired: the
// token's budget goes to the droplets, which bill every hour.
func TestNoKeyIsRetiredWhileDropletsAreBeingDeleted(t *testing.T) {
	w := newRetireWorld(t)
	w.sync()
	w.droplet.Status.DropletID = 7
	v1alpha1.Created.True(w.droplet)
	w.h.pause.Note(time.Now())
	w.sync()
	w.expect("another Droplet deleted just now", true, v1alpha1.KeyStateActive, 1)

	w.h.pause = deletepause.New(time.Now().Add(-w.h.pauseDelay))
	w.sync()
	w.expect("droplet deletes paused for the delay", false, v1alpha1.KeyStateRetired, 0)
}
