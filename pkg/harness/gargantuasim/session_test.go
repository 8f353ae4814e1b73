package gargantuasim

import (
	"errors"
	"maps"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An on-demand session gets a claim and one VM owned by it, labelled for
// the Environment's provisioner (in every version), with its status written
// and the claim bound.
func TestStartSession(t *testing.T) {
	for _, v := range []Version{V1_0, V3_3} {
		t.Run(v.String(), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, v)
			s, err := w.g.StartSession("alice", w.env, templateName)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.VMs) != 1 {
				t.Fatalf("session VMs %v", s.VMs)
			}
			claim, err := w.g.Clients.Claims.Get(w.g.Namespace, s.Claim, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			vm := w.vm(s.VMs[0])
			wantLabels := map[string]string{
				"dynamic": "true", claimLabel: claim.Name, boundLabel: "true", "ready": "false", restrictedLabel: "false",
				environmentLabel: w.env.Name, templateLabel: templateName, eventLabel: "on-demand", ProvisionerKey: "digitalocean",
			}
			if !maps.Equal(vm.Labels, wantLabels) {
				t.Errorf("labels %v, want %v", vm.Labels, wantLabels)
			}
			wantOwner := metav1.OwnerReference{APIVersion: "hobbyfarm.io/v1", Kind: "VirtualMachineClaim", Name: claim.Name, UID: claim.UID}
			if len(vm.OwnerReferences) != 1 || vm.OwnerReferences[0] != wantOwner || len(vm.Finalizers) != 0 {
				t.Errorf("owners %+v finalizers %v, want [%+v] and none", vm.OwnerReferences, vm.Finalizers, wantOwner)
			}
			wantSpec := hfv1.VirtualMachineSpec{VirtualMachineTemplateId: templateName, SshUsername: "root", Protocol: "ssh",
				VirtualMachineClaimId: claim.Name, UserId: "alice"}
			if vm.Spec != wantSpec {
				t.Errorf("spec %+v, want %+v", vm.Spec, wantSpec)
			}
			wantStatus := hfv1.VirtualMachineStatus{Status: hfv1.VmStatusRFP, Allocated: true, EnvironmentId: w.env.Name}
			if vm.Status != wantStatus {
				t.Errorf("status %+v, want %+v", vm.Status, wantStatus)
			}
			if got := claim.Spec.VirtualMachines[claimVMKey]; got.VirtualMachineId != vm.Name || got.Template != templateName {
				t.Errorf("claim records %+v", claim.Spec.VirtualMachines)
			}
			if claim.Status.BindMode != "dynamic" || !claim.Status.Bound || claim.Spec.UserId != "alice" {
				t.Errorf("claim spec %+v status %+v", claim.Spec, claim.Status)
			}
		})
	}
}

// Without the annotation the VM is Gargantua's own to provision.
func TestStartSessionWithoutProvisioner(t *testing.T) {
	t.Parallel()
	w := newWorld(t, V3_3)
	plain := Environment(w.g.Namespace, "plain-env", nil, nil)
	plain.Annotations = nil
	env, err := w.g.Clients.Envs.Create(plain)
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.g.StartSession("alice", env, templateName)
	if err != nil {
		t.Fatal(err)
	}
	vm := w.vm(s.VMs[0])
	if _, labelled := vm.Labels[ProvisionerKey]; labelled || !vm.Spec.Provision {
		t.Errorf("labels %v provision %v: want no provisioner label and provision=true", vm.Labels, vm.Spec.Provision)
	}
}

// A static session takes a free VM of the set, a running one first, and
// marks it bound and allocated; with none left the session is tainted.
func TestBindStaticVM(t *testing.T) {
	t.Parallel()
	w := newWorld(t, V3_0)
	made, err := w.g.CreateVMSet("set-b", w.env.Name, templateName, 2, "event-b")
	if err != nil {
		t.Fatal(err)
	}
	// The first listed would not be picked (Gargantua takes the last free one) unless running.
	vms, err := w.g.VMSetVMs("set-b")
	if err != nil || len(vms) != 2 {
		t.Fatalf("%d VMs, %v", len(vms), err)
	}
	running := vms[0].Name
	if _, err := retryWrite(w.g.Clients.VMs, w.g.Namespace, running, true,
		func(vm *hfv1.VirtualMachine) { vm.Status.Status = hfv1.VmStatusRunning }); err != nil {
		t.Fatal(err)
	}

	vm, s, err := w.g.BindStaticVM("set-b", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if vm.Name != running {
		t.Errorf("bound %s, want the running %s", vm.Name, running)
	}
	checkBound(t, w, vm.Name, s)

	other, s2, err := w.g.BindStaticVM("set-b", "bob")
	if err != nil {
		t.Fatal(err)
	}
	if other.Name == vm.Name || (other.Name != made[0].Name && other.Name != made[1].Name) {
		t.Errorf("second session got %s; first had %s", other.Name, vm.Name)
	}
	checkBound(t, w, other.Name, s2)

	if _, _, err := w.g.BindStaticVM("set-b", "carol"); !errors.Is(err, ErrSessionTainted) {
		t.Errorf("third session on a set of two: %v, want %v", err, ErrSessionTainted)
	}
}

func checkBound(t *testing.T, w *world, name string, s *Session) {
	t.Helper()
	vm := w.vm(name)
	if vm.Labels[boundLabel] != "true" || vm.Spec.UserId != s.User || vm.Spec.VirtualMachineClaimId != s.Claim || !vm.Status.Allocated {
		t.Errorf("VM %s: bound=%s user=%q claim=%q allocated=%v", name, vm.Labels[boundLabel],
			vm.Spec.UserId, vm.Spec.VirtualMachineClaimId, vm.Status.Allocated)
	}
	claim, err := w.g.Clients.Claims.Get(w.g.Namespace, s.Claim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if claim.Status.BindMode != "static" || !claim.Status.Bound || claim.Spec.VirtualMachines[claimVMKey].VirtualMachineId != name {
		t.Errorf("claim %s: status %+v vms %+v", claim.Name, claim.Status, claim.Spec.VirtualMachines)
	}
}

// Ending a session taints its VMs and deletes its claim; the garbage
// collector then deletes an on-demand VM, while a VM set's VM stays.
func TestEndSession(t *testing.T) {
	t.Parallel()
	w := newWorld(t, V3_0)
	dynamic, err := w.g.StartSession("alice", w.env, templateName)
	if err != nil {
		t.Fatal(err)
	}
	w.addFinalizer(dynamic.VMs[0]) // so the tainted VM can be looked at while being deleted
	if _, err := w.g.CreateVMSet("set-s", w.env.Name, templateName, 1, "event-s"); err != nil {
		t.Fatal(err)
	}
	_, static, err := w.g.BindStaticVM("set-s", "bob")
	if err != nil {
		t.Fatal(err)
	}

	for _, s := range []*Session{dynamic, static} {
		if err := w.g.EndSession(s); err != nil {
			t.Fatal(err)
		}
		if !w.vm(s.VMs[0]).Status.Tainted {
			t.Errorf("VM %s not tainted", s.VMs[0])
		}
		if _, err := w.g.Clients.Claims.Get(w.g.Namespace, s.Claim, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("claim %s after the session: %v", s.Claim, err)
		}
	}
	testutil.Eventually(t, 30*time.Second, "on-demand VM deleted by the garbage collector", func() string {
		if vm := w.vm(dynamic.VMs[0]); vm.DeletionTimestamp == nil {
			return "not deleting"
		}
		return ""
	})
	if vm := w.vm(static.VMs[0]); vm.DeletionTimestamp != nil {
		t.Errorf("static VM %s deleting at %v; nothing in v3.0 deletes it", vm.Name, vm.DeletionTimestamp)
	}
}
