package e2e

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	"golang.org/x/crypto/ssh"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func TestTenVMsAcrossTwoTemplatesRunAndLogIn(t *testing.T) {
	w := newWorld(t, worldOptions{fake: fakedo.Options{SSH: true}})
	env := w.standardEnv("do-env")

	var names []string
	for i := 0; i < 10; i++ {
		template := []string{"ubuntu", "debian"}[i%2]
		name := fmt.Sprintf("vm-%s-%d", template, i)
		names = append(names, name)
		w.createVM(name, env, template)
	}
	w.waitRunning(names...)

	droplets := w.do.Droplets(testToken)
	if len(droplets) != 10 || w.keyCreates() != 10 {
		t.Fatalf("fake holds %d droplets and registered %d keys, want 10 and 10", len(droplets), w.keyCreates())
	}
	byID := map[int]godo.Droplet{}
	dropletKeys := map[int]string{} // key ID -> VM
	for _, d := range droplets {
		byID[d.ID] = d
	}

	for i, name := range names {
		vm := w.vm(name)
		d := w.droplet(name)
		do, ok := byID[d.Status.DropletID]
		if !ok {
			t.Fatalf("%s: droplet %d not in the fake", name, d.Status.DropletID)
		}
		ip, _ := do.PublicIPv4()
		privateIP, _ := do.PrivateIPv4()
		if vm.Status.PublicIP != ip || vm.Status.PrivateIP != privateIP || vm.Status.Hostname != do.Name {
			t.Errorf("%s: VM status %+v does not match droplet %s/%s/%s", name, vm.Status, ip, privateIP, do.Name)
		}
		if vm.Status.EnvironmentId != env.Name || !vm.Status.Allocated {
			t.Errorf("%s: Gargantua's status fields were lost: %+v", name, vm.Status)
		}
		if vm.Labels["ready"] != "true" {
			t.Errorf("%s: label ready=%q, want true", name, vm.Labels["ready"])
		}
		if slices.ContainsFunc(do.Tags, digitalocean.IsVMTag) {
			// Found by its name: a tag per VM would be one more to tidy.
			t.Errorf("%s: droplet tags %v name its VM", name, do.Tags)
		}

		// Config precedence: template_mapping beats the template's config_map and environment_specifics.
		wantSize, wantImage, wantUserData := "s-1vcpu-1gb", "ubuntu-22-04-x64", "#cloud-config\n"
		if i%2 == 1 {
			wantSize, wantImage, wantUserData = "s-1vcpu-512mb-10gb", "debian-12-x64", "#cloud-config\nhostname: debian\n"
		}
		details, _ := w.do.Details(testToken, do.ID)
		if do.SizeSlug != wantSize || do.Image.Slug != wantImage || details.UserData != wantUserData {
			t.Errorf("%s: size %s image %s userdata %q; want %s %s %q", name, do.SizeSlug, do.Image.Slug, details.UserData, wantSize, wantImage, wantUserData)
		}

		// One key of its own (its login is checked below with the VM's Secret).
		if len(details.SSHKeyIDs) != 1 || dropletKeys[details.SSHKeyIDs[0]] != "" {
			t.Errorf("%s: droplet keys %v, want one key no other VM's droplet has (%v)", name, details.SSHKeyIDs, dropletKeys)
		} else {
			dropletKeys[details.SSHKeyIDs[0]] = name
		}

		if vm.Spec.SecretName == "" || vm.Spec.SshUsername != "root" {
			t.Fatalf("%s: spec secret_name %q ssh_username %q", name, vm.Spec.SecretName, vm.Spec.SshUsername)
		}
		secret, err := w.hf.Secrets.Get(w.ns, vm.Spec.SecretName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		signer, err := ssh.ParsePrivateKey(secret.Data["private_key"])
		if err != nil {
			t.Fatalf("%s: Gargantua's shell could not parse the private key: %v", name, err)
		}
		addr, ok := w.do.SSHAddr(testToken, do.ID)
		if !ok {
			t.Fatalf("%s: fake droplet serves no SSH", name)
		}
		if host, _, _ := net.SplitHostPort(addr); host != vm.Status.PublicIP && host != "127.0.0.1" {
			t.Errorf("%s: SSH at %s, VM public IP %s", name, addr, vm.Status.PublicIP)
		}
		if out := sshRun(t, addr, vm.Spec.SshUsername, signer, "hostname"); out != do.Name {
			t.Errorf("%s: ssh hostname = %q, want %q", name, out, do.Name)
		}
		if !v1alpha1.Configured.IsTrue(d) || v1alpha1.Configured.GetReason(d) != v1alpha1.ReasonConfigValid {
			t.Errorf("%s: Droplet Configured=%q (%s), want True (%s)", name, v1alpha1.Configured.GetStatus(d), v1alpha1.Configured.GetReason(d), v1alpha1.ReasonConfigValid)
		}
		checkProgressEvents(w, name, d)
	}

	// Each droplet was listed once it could be; none was read on its own.
	if n := w.do.RouteRequests(fakedo.RouteGetDroplet); n != 0 {
		t.Errorf("%d requests %s (%v): a new droplet should be read from the shared list", n, fakedo.RouteGetDroplet, w.do.RequestCounts())
	}
}

// checkProgressEvents: the VM announces its droplet's creation and first
// boot once each, and the Droplet leaves both to it.
func checkProgressEvents(w *world, name string, d *v1alpha1.Droplet) {
	w.t.Helper()
	want := map[string]int32{
		fmt.Sprintf("Normal Provisioned: DigitalOcean droplet %d created in %s", d.Status.DropletID, d.Spec.Region): 1,
		fmt.Sprintf("Normal Running: droplet %d is active at %s", d.Status.DropletID, d.Status.PublicIPv4):          1,
	}
	w.eventually(10*time.Second, name+"'s progress Events", func() string {
		for text, n := range want {
			if got := w.eventCount("VirtualMachine", name, text); got != n {
				return fmt.Sprintf("%d Events %q on the VM, want %d; it has %q", got, text, n, w.vmEvents(name))
			}
		}
		return ""
	})
	for _, reason := range []string{"Normal Created: ", "Normal Active: "} {
		if hasEvent(w.events("Droplet", name), reason) {
			w.t.Errorf("%s: the Droplet repeats its VM's Event %q: %q", name, reason, w.events("Droplet", name))
		}
	}
}

func sshRun(t *testing.T, addr, user string, signer ssh.Signer, cmd string) string {
	t.Helper()
	client, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{
		User: user, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatalf("ssh to %s: %v", addr, err)
	}
	defer client.Close()
	session, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	out, err := session.Output(cmd)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// Gargantua creates a VM and then writes its status with the create's
// resourceVersion; any write of ours in between would make that fail.
func TestGargantuaStatusWriteNeverConflicts(t *testing.T) {
	w := newWorld(t, worldOptions{})
	env := w.standardEnv("do-env")
	var names []string
	for i := 0; i < 20; i++ {
		name := fmt.Sprintf("race-%d", i)
		names = append(names, name)
		w.createVM(name, env, "ubuntu") // fails the test if the status write conflicts
	}
	w.waitRunning(names...)
}

func TestOtherProvisionersVMsAreNeverTouched(t *testing.T) {
	w := newWorld(t, worldOptions{})
	env := w.standardEnv("do-env")
	other, err := w.hf.CreateVM(w.ns, "other-provisioner", env, "ubuntu", "aws")
	if err != nil {
		t.Fatal(err)
	}
	unlabelled, err := w.hf.CreateVM(w.ns, "no-label", env, "ubuntu", "")
	if err != nil {
		t.Fatal(err)
	}
	w.createVM("ours", env, "ubuntu")
	w.waitRunning("ours")

	for _, orig := range []*hfv1.VirtualMachine{other, unlabelled} {
		vm := w.vm(orig.Name)
		if vm.ResourceVersion != orig.ResourceVersion || len(vm.Finalizers) != 0 || vm.Spec.SecretName != "" {
			t.Errorf("%s was written to: rv %s→%s finalizers %v secret %q", vm.Name, orig.ResourceVersion, vm.ResourceVersion, vm.Finalizers, vm.Spec.SecretName)
		}
		if _, err := w.droplets.Get(w.ns, vm.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s got a Droplet (err %v)", vm.Name, err)
		}
	}
	if n := len(w.do.Droplets(testToken)); n != 1 {
		t.Errorf("fake holds %d droplets, want 1", n)
	}
}

// TestDeletingVMsRemovesEverything is the smoke test go test -short runs:
// VMs run, are deleted, and nothing is left in DigitalOcean or Kubernetes.
func TestDeletingVMsRemovesEverything(t *testing.T) {
	testenv.Smoke(t)
	w := newWorld(t, worldOptions{})
	env := w.standardEnv("do-env")
	names := []string{"del-1", "del-2", "del-3"}
	for _, n := range names {
		w.createVM(n, env, "ubuntu")
	}
	w.waitRunning(names...)

	// A VM with another controller's finalizer keeps it.
	foreign := "example.com/keep-me"
	w.setFinalizers("del-3", func(f []string) []string { return append(f, foreign) })

	for _, n := range names {
		if err := w.hf.VMs.Delete(w.ns, n, nil); err != nil {
			t.Fatal(err)
		}
	}
	w.eventually(60*time.Second, "DigitalOcean emptied", func() string {
		if d, k := len(w.do.Droplets(testToken)), len(w.do.Keys(testToken)); d+k > 0 {
			return fmt.Sprintf("%d droplets, %d keys left", d, k)
		}
		return ""
	})
	w.eventually(60*time.Second, "objects gone", func() string {
		droplets, _ := w.droplets.List(w.ns, metav1.ListOptions{})
		keys, _ := w.keys.List(w.ns, metav1.ListOptions{})
		secrets, _ := w.hf.Secrets.List(w.ns, metav1.ListOptions{LabelSelector: labels.Set{"hobbyfarm.io/provisioner": "digitalocean"}.String()})
		if n := len(droplets.Items) + len(keys.Items) + len(secrets.Items); n > 0 {
			return fmt.Sprintf("%d droplets, %d keys, %d secrets", len(droplets.Items), len(keys.Items), len(secrets.Items))
		}
		for _, n := range names[:2] {
			if _, err := w.hf.VMs.Get(w.ns, n, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return n + " still exists"
			}
		}
		// Our finalizer is released last, after everything else is gone.
		if f := w.vm("del-3").Finalizers; !slices.Equal(f, []string{foreign}) {
			return fmt.Sprintf("del-3 finalizers %v, want only %s", f, foreign)
		}
		return ""
	})
	w.setFinalizers("del-3", func([]string) []string { return nil })
}

func TestChangedIPReachesVM(t *testing.T) {
	resync := 2 * time.Second
	w := newWorld(t, worldOptions{activeResync: resync})
	env := w.standardEnv("do-env")
	w.createVM("moving", env, "ubuntu")
	w.waitRunning("moving")

	d := w.droplet("moving")
	if err := w.do.SetDropletPublicIP(testToken, d.Status.DropletID, "127.100.9.9"); err != nil {
		t.Fatal(err)
	}
	changed := time.Now()
	w.eventually(3*resync, "new IP on the VM", func() string {
		if ip := w.vm("moving").Status.PublicIP; ip != "127.100.9.9" {
			return "VM public_ip is " + ip
		}
		return ""
	})
	if took := time.Since(changed); took > resync+time.Second {
		t.Errorf("new IP reached the VM after %v, resync period %v", took, resync)
	}
	if !v1alpha1.Ready.IsTrue(w.droplet("moving")) {
		t.Error("droplet not Ready")
	}
}
