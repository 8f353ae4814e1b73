package e2e

import (
	"fmt"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/virtualmachine"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshprobe"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A droplet DigitalOcean reports active, whose sshd is not up yet, keeps
// its VM provisioned; the VM is running soon after sshd comes up.
func TestRunningWaitsForSSH(t *testing.T) {
	w := newWorld(t, worldOptions{fake: fakedo.Options{Guest: fakedo.Guest{SSHDown: true}}})
	env := w.standardEnv("env")
	w.createVM("vm-1", env, "ubuntu")

	w.eventually(30*time.Second, "droplet active, login refused", func() string {
		d := w.dropletOrEmpty("vm-1")
		if !v1alpha1.Ready.IsTrue(d) || v1alpha1.Reachable.GetReason(d) != sshprobe.ReasonUnreachable {
			return fmt.Sprintf("Ready=%s Reachable=%s/%s", v1alpha1.Ready.GetStatus(d), v1alpha1.Reachable.GetStatus(d), v1alpha1.Reachable.GetReason(d))
		}
		return ""
	})
	w.consistently(3*time.Second, "VM stays provisioned while sshd is down", func() string {
		if vm := w.vm("vm-1"); vm.Status.Status != hfv1.VmStatusProvisioned {
			return fmt.Sprintf("status %q", vm.Status.Status)
		}
		return ""
	})

	if err := w.do.SetGuest(testToken, w.droplet("vm-1").Status.DropletID, fakedo.Guest{}); err != nil {
		t.Fatal(err)
	}
	up := time.Now()
	w.eventually(5*time.Second, "VM running within 5s of sshd coming up", func() string {
		if vm := w.vm("vm-1"); vm.Status.Status != hfv1.VmStatusRunning {
			return fmt.Sprintf("status %q", vm.Status.Status)
		}
		return ""
	})
	t.Logf("running %s after sshd came up", time.Since(up).Round(time.Millisecond))
	if d := w.droplet("vm-1"); v1alpha1.Reachable.GetReason(d) != sshprobe.ReasonLoggedIn {
		t.Errorf("Reachable reason %q, want %q", v1alpha1.Reachable.GetReason(d), sshprobe.ReasonLoggedIn)
	}
	w.loginWithSecret("vm-1")
}

// A droplet whose sshd refuses the VM's key never runs: the Droplet says
// why, and the VM ends errorduringprovisioning after ready_timeout.
func TestRefusedKeyEndsInErrorAfterReadyTimeout(t *testing.T) {
	w := newWorld(t, worldOptions{fake: fakedo.Options{Guest: fakedo.Guest{RefuseKeys: true}}})
	env := w.standardEnv("env")
	w.setSpecifics(env.Name, map[string]string{"region": "nyc1", "token-secret": tokenSecret, "ready_timeout": "8s"})
	w.createVM("vm-1", env, "ubuntu")

	w.eventually(30*time.Second, "key refusal on the Droplet", func() string {
		d := w.dropletOrEmpty("vm-1")
		if v1alpha1.Reachable.GetReason(d) != sshprobe.ReasonKeyRefused {
			return fmt.Sprintf("Reachable=%s/%s %s", v1alpha1.Reachable.GetStatus(d), v1alpha1.Reachable.GetReason(d), v1alpha1.Reachable.GetMessage(d))
		}
		if vm := w.vm("vm-1"); vm.Status.Status == hfv1.VmStatusRunning {
			return "VM running although its key is refused"
		}
		return ""
	})
	w.eventually(30*time.Second, "VM errorduringprovisioning after ready_timeout", func() string {
		vm := w.vm("vm-1")
		if vm.Status.Status != virtualmachine.VMStatusErrorDuringProvisioning {
			return fmt.Sprintf("status %q", vm.Status.Status)
		}
		return ""
	})
	d := w.droplet("vm-1")
	if v1alpha1.Reachable.GetReason(d) != "ReadyTimeout" {
		t.Errorf("Reachable reason %q, want ReadyTimeout", v1alpha1.Reachable.GetReason(d))
	}
	if created, _ := time.Parse(time.RFC3339, d.Status.CreatedAt); time.Since(created) < 8*time.Second {
		t.Errorf("failed %s after the create, before ready_timeout", time.Since(created))
	}
	// Events are recorded asynchronously, after the status write.
	w.eventually(10*time.Second, "a ProvisioningFailed Event naming the refused key", func() string {
		if events := w.vmEvents("vm-1"); !hasEvent(events, "ProvisioningFailed") || !hasEvent(events, "refused the VM's key") {
			return fmt.Sprintf("VM events %q", events)
		}
		return ""
	})
}

// With ready_check: cloud-init the VM runs only once cloud-init is done,
// and an error of cloud-init is reported as a failure.
func TestCloudInitReadyCheck(t *testing.T) {
	w := newWorld(t, worldOptions{fake: fakedo.Options{Guest: fakedo.Guest{CloudInit: fakedo.CloudInitRunning}}})
	env := w.standardEnv("env")
	w.setSpecifics(env.Name, map[string]string{"region": "nyc1", "token-secret": tokenSecret, "ready_check": "cloud-init"})
	w.createVM("vm-ok", env, "ubuntu")
	w.createVM("vm-bad", env, "ubuntu")

	for _, name := range []string{"vm-ok", "vm-bad"} {
		w.eventually(30*time.Second, name+" waits for cloud-init", func() string {
			d := w.dropletOrEmpty(name)
			if v1alpha1.Reachable.GetReason(d) != sshprobe.ReasonCloudInitRunning {
				return fmt.Sprintf("Reachable=%s/%s", v1alpha1.Reachable.GetStatus(d), v1alpha1.Reachable.GetReason(d))
			}
			return ""
		})
	}
	w.consistently(2*time.Second, "no VM runs while cloud-init runs", func() string {
		for _, name := range []string{"vm-ok", "vm-bad"} {
			if vm := w.vm(name); vm.Status.Status != hfv1.VmStatusProvisioned {
				return fmt.Sprintf("%s is %q", name, vm.Status.Status)
			}
		}
		return ""
	})

	for name, result := range map[string]fakedo.CloudInitResult{"vm-ok": fakedo.CloudInitDone, "vm-bad": fakedo.CloudInitError} {
		if err := w.do.SetGuest(testToken, w.droplet(name).Status.DropletID, fakedo.Guest{CloudInit: result}); err != nil {
			t.Fatal(err)
		}
	}
	w.waitRunning("vm-ok")
	w.eventually(15*time.Second, "vm-bad fails with cloud-init's error", func() string {
		vm, d := w.vm("vm-bad"), w.droplet("vm-bad")
		if vm.Status.Status != virtualmachine.VMStatusErrorDuringProvisioning || v1alpha1.Reachable.GetReason(d) != sshprobe.ReasonCloudInitFailed {
			return fmt.Sprintf("status %q, Reachable %s", vm.Status.Status, v1alpha1.Reachable.GetReason(d))
		}
		return ""
	})
	if !hasEvent(w.vmEvents("vm-bad"), "cloud-init") {
		t.Errorf("vm-bad events %q do not name cloud-init", w.vmEvents("vm-bad"))
	}
}

// ready_check: none reports running as soon as DigitalOcean says active,
// sshd or not.
func TestReadyCheckNone(t *testing.T) {
	w := newWorld(t, worldOptions{fake: fakedo.Options{Guest: fakedo.Guest{SSHDown: true}}})
	env := w.standardEnv("env")
	w.setSpecifics(env.Name, map[string]string{"region": "nyc1", "token-secret": tokenSecret, "ready_check": "none"})
	w.createVM("vm-1", env, "ubuntu")
	w.waitRunning("vm-1")
	if d := w.droplet("vm-1"); v1alpha1.Reachable.GetReason(d) != "NotChecked" {
		t.Errorf("Reachable reason %q, want NotChecked", v1alpha1.Reachable.GetReason(d))
	}
}

// dropletOrEmpty is the VM's Droplet, or an empty one while there is none.
func (w *world) dropletOrEmpty(name string) *v1alpha1.Droplet {
	w.t.Helper()
	d, err := w.droplets.Get(w.ns, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return &v1alpha1.Droplet{}
	}
	if err != nil {
		w.t.Fatal(err)
	}
	return d
}
