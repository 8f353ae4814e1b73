package e2e

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshkey"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ed25519 by default, RSA where ssh_key_type asks for it; both parse as
// Gargantua's shell parses them, are accepted by DigitalOcean and log in.
// Changing ssh_key_type later never replaces a VM's key.
func TestSSHKeyTypes(t *testing.T) {
	w := newWorld(t, worldOptions{fake: fakedo.Options{SSH: true}})
	for _, tmpl := range []*hfv1.VirtualMachineTemplate{
		gargantuasim.Template(w.ns, "ubuntu", "ubuntu-22-04-x64", nil),
		gargantuasim.Template(w.ns, "legacy", "ubuntu-20-04-x64", nil),
	} {
		if _, err := w.hf.Templates.Create(tmpl); err != nil {
			t.Fatal(err)
		}
	}
	env := w.createEnv(gargantuasim.Environment(w.ns, "keys-env", validSpecifics, map[string]map[string]string{
		"ubuntu": {"size": "s-1vcpu-1gb"},
		"legacy": {"size": "s-1vcpu-1gb", "ssh_key_type": "rsa"},
	}))
	w.createVM("ed", env, "ubuntu")
	w.createVM("rsa", env, "legacy")
	w.waitRunning("ed", "rsa")

	for name, algo := range map[string]string{"ed": ssh.KeyAlgoED25519, "rsa": ssh.KeyAlgoRSA} {
		signer := w.loginWithSecret(name)
		if got := signer.PublicKey().Type(); got != algo {
			t.Errorf("%s: key type %s, want %s", name, got, algo)
		}
	}
	if n := w.keyCreates(); n != 2 {
		t.Fatalf("DigitalOcean registered %d keys, want 2", n)
	}
	before := w.secret("ed-ssh")

	// An unknown type is a config error naming the key and the fix, for a
	// VM that still needs the config (a running one never reads it again, so
	// it is not told)...
	w.setSpecifics(env.Name, with(validSpecifics, "ssh_key_type", "dsa"))
	w.createVM("pending", env, "ubuntu")
	w.eventually(30*time.Second, "ssh_key_type=dsa reported", func() string {
		return expectCondition(w.dropletOrEmpty("pending"), v1alpha1.Configured, "InvalidConfig", `"ssh_key_type": "dsa" is not a supported SSH key type; set it to "ed25519" or "rsa"`)
	})
	if events := w.vmEvents("pending"); !hasEvent(events, "Warning InvalidConfig: ") || !hasEvent(events, "ssh_key_type") {
		t.Errorf("VM events %q lack the InvalidConfig warning", events)
	}
	// ...and a valid new type applies to new key pairs only.
	w.setSpecifics(env.Name, with(validSpecifics, "ssh_key_type", "rsa"))
	w.waitRunning("pending")
	if got := w.loginWithSecret("pending").PublicKey().Type(); got != ssh.KeyAlgoRSA {
		t.Errorf("pending: key type %s, want %s", got, ssh.KeyAlgoRSA)
	}
	w.consistently(3*time.Second, "ed keeps its key", func() string {
		now := w.secret("ed-ssh")
		if !bytes.Equal(now.Data[sshkey.PrivateKeyField], before.Data[sshkey.PrivateKeyField]) ||
			!bytes.Equal(now.Data[sshkey.PublicKeyField], before.Data[sshkey.PublicKeyField]) {
			return "the key pair of ed was replaced"
		}
		if n := w.keyCreates(); n != 3 {
			return fmt.Sprintf("DigitalOcean registered %d keys, want 3 (ed, rsa, pending)", n)
		}
		return ""
	})
	w.loginWithSecret("ed")
}

// A key-pair Secret deleted by hand is not replaced by a pair the droplet
// would refuse: the Droplet says so, and a restored Secret is checked.
func TestKeySecretDeletedByHand(t *testing.T) {
	w := newWorld(t, worldOptions{fake: fakedo.Options{SSH: true}})
	env := w.standardEnv("do-env")
	w.createVM("lost", env, "ubuntu")
	w.waitRunning("lost")
	original := w.secret("lost-ssh")
	dropletID := w.droplet("lost").Status.DropletID
	keys := w.keyCreates()

	w.deleteKeySecret("lost", original, fmt.Sprintf(`the SSH key Secret "lost-ssh" was deleted, but droplet %d was created with the old key`, dropletID))
	for kind, events := range map[string][]string{"VM": w.vmEvents("lost"), "Droplet": w.events("Droplet", "lost")} {
		if !hasEvent(events, "Warning KeySecretLost: ") || !hasEvent(events, "delete the VM to get a new one") {
			t.Errorf("%s events %q lack the KeySecretLost warning with its fix", kind, events)
		}
	}
	w.consistently(3*time.Second, "no mismatched key pair made", func() string {
		if _, err := w.hf.Secrets.Get(w.ns, "lost-ssh", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Sprintf("Secret lost-ssh: %v, want it left deleted", err)
		}
		if n := w.keyCreates(); n != keys {
			return fmt.Sprintf("DigitalOcean registered %d keys, want %d", n, keys)
		}
		if s := w.vm("lost").Status.Status; s != hfv1.VmStatusRunning {
			return "VM is " + string(s)
		}
		return ""
	})

	// A Secret with some other pair is reported, not used to replace the key.
	other, err := sshkey.NewED25519("other")
	if err != nil {
		t.Fatal(err)
	}
	restored := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "lost-ssh", Namespace: w.ns}, Data: map[string][]byte{
		sshkey.PrivateKeyField: other.PrivateKeyPEM, sshkey.PublicKeyField: []byte(other.PublicKey)}}
	if _, err := w.hf.Secrets.Create(restored); err != nil {
		t.Fatal(err)
	}
	w.eventually(30*time.Second, "KeySecretMismatch reported", func() string {
		return expectCondition(w.droplet("lost"), v1alpha1.KeyPair, "KeySecretMismatch", `the SSH key Secret "lost-ssh" holds the key `)
	})

	// The original, restored from a backup, puts it right.
	w.deleteKeySecret("lost", nil, `the SSH key Secret "lost-ssh" was deleted`)
	original.ObjectMeta = metav1.ObjectMeta{Name: original.Name, Namespace: original.Namespace}
	if _, err := w.hf.Secrets.Create(original); err != nil {
		t.Fatal(err)
	}
	w.eventually(30*time.Second, "KeyPair restored", func() string {
		d := w.droplet("lost")
		if !v1alpha1.KeyPair.IsTrue(d) || v1alpha1.KeyPair.GetReason(d) != "Restored" {
			return fmt.Sprintf("KeyPair=%q reason %q", v1alpha1.KeyPair.GetStatus(d), v1alpha1.KeyPair.GetReason(d))
		}
		return ""
	})
	if events := w.vmEvents("lost"); !hasEvent(events, "Normal Restored: ") {
		t.Errorf("VM events %q lack the Restored event", events)
	}
	w.loginWithSecret("lost")
}

// Before anything in DigitalOcean holds the key, a deleted Secret is simply
// made again, and the VM provisions with the new pair.
func TestKeySecretDeletedBeforeUse(t *testing.T) {
	w := newWorld(t, worldOptions{fake: fakedo.Options{SSH: true}})
	if _, err := w.hf.Templates.Create(gargantuasim.Template(w.ns, "ubuntu", "ubuntu-22-04-x64", nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hf.Secrets.Create(gargantuasim.TokenSecret(w.ns, "late-token", "dop_v1_not-valid-yet")); err != nil {
		t.Fatal(err)
	}
	env := w.createEnv(gargantuasim.Environment(w.ns, "late-env", with(validSpecifics, "token-secret", "late-token"), validMapping))
	w.createVM("early", env, "ubuntu")
	w.eventually(30*time.Second, "key rejected", func() string {
		k, err := w.keys.Get(w.ns, "early", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		return expectCondition(k, v1alpha1.Created, "Unauthorized", "DigitalOcean rejected the API token")
	})
	first := w.secret("early-ssh")
	lastDelete := time.Time{}
	w.eventually(60*time.Second, "a new key pair", func() string {
		s, err := w.hf.Secrets.Get(w.ns, "early-ssh", metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return "no Secret yet"
		case err != nil:
			t.Fatal(err)
		case !bytes.Equal(s.Data[sshkey.PublicKeyField], first.Data[sshkey.PublicKeyField]):
			return ""
		case time.Since(lastDelete) < 3*time.Second:
			// A reconcile in flight may put the same pair back (see deleteKeySecret).
			return "same public key; waiting for quiet"
		}
		if err := w.hf.Secrets.Delete(w.ns, "early-ssh", nil); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		lastDelete = time.Now()
		return "deleting"
	})
	if st := v1alpha1.KeyPair.GetStatus(w.droplet("early")); st != "" {
		t.Errorf("KeyPair=%q (%s), want no condition: nothing used the old key", st, v1alpha1.KeyPair.GetMessage(w.droplet("early")))
	}

	token := w.secret("late-token")
	token.Data = map[string][]byte{"token": []byte(testToken)}
	if _, err := w.hf.Secrets.Update(token); err != nil {
		t.Fatal(err)
	}
	w.waitRunning("early")
	w.loginWithSecret("early")
}

// deleteKeySecret deletes the VM's key-pair Secret until the Droplet reports
// KeySecretLost with lostText. A reconcile in flight that read the Secret
// before the delete applies its copy again (harmless: the same pair), so a
// Secret that comes back is deleted again once things are quiet; a pair
// other than want's, if given, is never made. Once KeySecretLost is
// reported, the VM's later reconciles all see the Secret gone.
func (w *world) deleteKeySecret(vm string, want *corev1.Secret, lostText string) {
	w.t.Helper()
	name := vm + "-ssh"
	lastDelete := time.Time{}
	w.eventually(60*time.Second, "Secret "+name+" deleted and reported lost", func() string {
		s, err := w.hf.Secrets.Get(w.ns, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return expectCondition(w.droplet(vm), v1alpha1.KeyPair, "KeySecretLost", lostText)
		case err != nil:
			w.t.Fatal(err)
		case want != nil && !bytes.Equal(s.Data[sshkey.PrivateKeyField], want.Data[sshkey.PrivateKeyField]):
			w.t.Fatalf("Secret %s now holds another key pair", name)
		case time.Since(lastDelete) < 3*time.Second:
			return "put back by a reconcile in flight; waiting for quiet"
		}
		if err := w.hf.Secrets.Delete(w.ns, name, nil); err != nil && !apierrors.IsNotFound(err) {
			w.t.Fatal(err)
		}
		lastDelete = time.Now()
		return "deleting"
	})
}

func (w *world) secret(name string) *corev1.Secret {
	w.t.Helper()
	s, err := w.hf.Secrets.Get(w.ns, name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return s
}

func (w *world) setSpecifics(envName string, specifics map[string]string) {
	w.t.Helper()
	env, err := w.hf.Envs.Get(w.ns, envName, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	env.Spec.EnvironmentSpecifics = specifics
	if _, err := w.hf.Envs.Update(env); err != nil {
		w.t.Fatal(err)
	}
}

// loginWithSecret logs in to the VM's droplet as Gargantua's shell would,
// with the private key of spec.secret_name; the fake's sshd accepts only the
// keys the droplet was created with.
func (w *world) loginWithSecret(name string) ssh.Signer {
	w.t.Helper()
	vm := w.vm(name)
	secret := w.secret(vm.Spec.SecretName)
	signer, err := ssh.ParsePrivateKey(secret.Data[sshkey.PrivateKeyField])
	if err != nil {
		w.t.Fatalf("%s: Gargantua's shell could not parse the private key: %v", name, err)
	}
	fingerprint, err := sshkey.Fingerprint(string(secret.Data[sshkey.PublicKeyField]))
	if err != nil || fingerprint != ssh.FingerprintLegacyMD5(signer.PublicKey()) {
		w.t.Fatalf("%s: the Secret's public key (%v) is not its private key's", name, err)
	}
	d := w.droplet(name)
	addr, ok := w.do.SSHAddr(testToken, d.Status.DropletID)
	if !ok {
		w.t.Fatalf("%s: fake droplet serves no SSH", name)
	}
	if out := sshRun(w.t, addr, vm.Spec.SshUsername, signer, "hostname"); out != d.Spec.Name {
		w.t.Errorf("%s: ssh hostname = %q, want %q", name, out, d.Spec.Name)
	}
	return signer
}
