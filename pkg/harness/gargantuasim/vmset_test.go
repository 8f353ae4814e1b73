package gargantuasim

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A VM set's VMs are made before any user exists: free, with Gargantua's
// finalizer and an owner reference to the set, and from v3.0 on labelled for
// the Environment's provisioner.
func TestCreateVMSet(t *testing.T) {
	for v, labelled := range map[Version]bool{V1_0: false, V3_0: true, V3_3: true} {
		t.Run(v.String(), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, v)
			made, err := w.g.CreateVMSet("set-a", w.env.Name, templateName, 3, "event-1")
			if err != nil {
				t.Fatal(err)
			}
			if len(made) != 3 {
				t.Fatalf("made %d VMs, want 3", len(made))
			}
			set, err := w.g.Clients.VMSets.Get(w.g.Namespace, "set-a", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if set.Spec.Count != 3 || set.Spec.Environment != w.env.Name || set.Spec.VMTemplate != templateName {
				t.Errorf("VM set spec %+v", set.Spec)
			}
			vms, err := w.g.VMSetVMs("set-a")
			if err != nil {
				t.Fatal(err)
			}
			if len(vms) != 3 {
				t.Fatalf("VM set has %d VMs, want 3", len(vms))
			}
			for _, vm := range vms {
				if problems := vmSetVMProblems(&vm, set, labelled); len(problems) > 0 {
					t.Errorf("VM %s:\n%s", vm.Name, strings.Join(problems, "\n"))
				}
			}
		})
	}
}

func vmSetVMProblems(vm *hfv1.VirtualMachine, set *hfv1.VirtualMachineSet, labelled bool) []string {
	var p []string
	check := func(what string, got, want any) {
		if fmt.Sprint(got) != fmt.Sprint(want) {
			p = append(p, fmt.Sprintf("%s = %v, want %v", what, got, want))
		}
	}
	want := map[string]string{
		"dynamic": "false", vmsetLabel: set.Name, boundLabel: "false", "ready": "false", restrictedLabel: "false",
		environmentLabel: set.Spec.Environment, templateLabel: templateName, eventLabel: "event-1",
	}
	if labelled {
		want[ProvisionerKey] = "digitalocean"
	}
	if !maps.Equal(vm.Labels, want) {
		p = append(p, fmt.Sprintf("labels %v, want %v", vm.Labels, want))
	}
	check("name prefix", strings.HasPrefix(vm.Name, set.Name+"-"), true)
	check("finalizers", vm.Finalizers, []string{VMSetFinalizer})
	wantOwner := metav1.OwnerReference{APIVersion: "hobbyfarm.io/v1", Kind: "VirtualMachineSet", Name: set.Name, UID: set.UID}
	if len(vm.OwnerReferences) != 1 || vm.OwnerReferences[0] != wantOwner {
		p = append(p, fmt.Sprintf("owner references %+v, want [%+v]", vm.OwnerReferences, wantOwner))
	}
	check("spec", vm.Spec, hfv1.VirtualMachineSpec{VirtualMachineTemplateId: templateName, SshUsername: "root",
		Protocol: "ssh", Provision: !labelled, VirtualMachineSetId: set.Name})
	check("status", vm.Status, hfv1.VirtualMachineStatus{Status: hfv1.VmStatusRFP, EnvironmentId: set.Spec.Environment})
	return p
}

// The status write after the create uses the create's resourceVersion: a
// write in between (a provisioner acting too early) makes it conflict. Who
// then retries depends on the path and the version.
func TestFirstStatusWriteAfterAConcurrentWrite(t *testing.T) {
	for _, tc := range []struct {
		name    string
		v       Version
		vmset   bool
		wantErr error // nil: Gargantua retried and the status is there
	}{
		{"claim path go.mod version", V1_0, false, ErrSessionTainted},
		{"claim path v3.0", V3_0, false, nil},
		{"VM set path v3.0", V3_0, true, ErrLeftWithoutStatus},
		{"VM set path v3.3", V3_3, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, tc.v)
			w.g.betweenCreateAndStatus = func(vm *hfv1.VirtualMachine) {
				_, err := retryWrite(w.g.Clients.VMs, vm.Namespace, vm.Name, false,
					func(vm *hfv1.VirtualMachine) { vm.Annotations = map[string]string{"example.com/early": "yes"} })
				if err != nil {
					t.Error(err)
				}
			}
			var name string
			var err error
			if tc.vmset {
				var made []*hfv1.VirtualMachine
				made, err = w.g.CreateVMSet("set-e", w.env.Name, templateName, 1, "event-e")
				if len(made) == 1 {
					name = made[0].Name
				}
			} else {
				var s *Session
				s, err = w.g.StartSession("alice", w.env, templateName)
				if s != nil && len(s.VMs) == 1 {
					name = s.VMs[0]
				}
			}
			if name == "" {
				t.Fatalf("no VM made (error %v)", err)
			}
			envID := w.vm(name).Status.EnvironmentId
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Errorf("error %v, want %v", err, tc.wantErr)
				}
				if envID != "" {
					t.Errorf("status.environment_id = %q: the status was written after all", envID)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if envID != w.env.Name {
				t.Errorf("status.environment_id = %q after the retry, want %q", envID, w.env.Name)
			}
		})
	}
}

// At the event's end the set is deleted, the garbage collector deletes its
// VMs and the VM set controller removes its own finalizer, and only that.
func TestDeleteVMSet(t *testing.T) {
	t.Parallel()
	w := newWorld(t, V3_0)
	w.run()
	made, err := w.g.CreateVMSet("set-d", w.env.Name, templateName, 2, "event-d")
	if err != nil {
		t.Fatal(err)
	}
	kept, other := made[0].Name, made[1].Name
	w.addFinalizer(kept)
	if err := w.g.DeleteVMSet("set-d"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 30*time.Second, "VM without a provisioner finalizer deleted", func() string { return w.gone(other) })
	testutil.Eventually(t, 10*time.Second, "vmset finalizer removed, the provisioner's kept", func() string {
		vm := w.vm(kept)
		if vm.DeletionTimestamp == nil || !slices.Equal(vm.Finalizers, []string{keepFinalizer}) {
			return fmt.Sprintf("deletionTimestamp %v, finalizers %v", vm.DeletionTimestamp, vm.Finalizers)
		}
		return ""
	})
	w.setFinalizers(kept, func([]string) []string { return nil })
	testutil.Eventually(t, 10*time.Second, "VM gone once the provisioner let go", func() string { return w.gone(kept) })
	if vms, err := w.g.VMSetVMs("set-d"); err != nil || len(vms) != 0 {
		t.Errorf("after the set's deletion: %d VMs (%v), none recreated expected", len(vms), err)
	}
}
