package testenv

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A VM's status is written through the status subresource with the resourceVersion of
// the create, and fields the schema does not know are pruned, in spec and status alike.
func TestVirtualMachineStatusSubresourcePrunesUnknownFields(t *testing.T) {
	env := Require(t)
	ns := env.NewNamespace(t)
	ctx := testContext(t)
	_, dyn := clients(t, env)
	vms := dyn.Resource(vmGVR).Namespace(ns)

	vm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hobbyfarm.io/v1",
		"kind":       "VirtualMachine",
		"metadata":   map[string]any{"name": "vm-1"},
		"spec": map[string]any{
			"vm_template_id": "ubuntu",
			"ssh_username":   "ubuntu",
			"secret_name":    "vm-1-key",
			"provision":      true,
			"not_in_schema":  "pruned",
		},
	}}
	created, err := vms.Create(ctx, vm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedString(created.Object, "spec", "not_in_schema"); found {
		t.Error("unknown spec field was not pruned")
	}

	created.Object["status"] = map[string]any{
		"status":         "running",
		"allocated":      false,
		"public_ip":      "203.0.113.7",
		"private_ip":     "10.1.2.3",
		"hostname":       "vm-1",
		"made_up_status": "should vanish",
	}
	updated, err := vms.UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update status with the create's resourceVersion %s: %v", created.GetResourceVersion(), err)
	}

	got, err := vms.Get(ctx, "vm-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range []*unstructured.Unstructured{updated, got} {
		if ip, _, _ := unstructured.NestedString(obj.Object, "status", "public_ip"); ip != "203.0.113.7" {
			t.Errorf("status.public_ip = %q", ip)
		}
		if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "made_up_status"); found {
			t.Error("unknown status field was not pruned")
		}
	}
	if got.GetResourceVersion() == created.GetResourceVersion() {
		t.Error("status update did not change the resourceVersion")
	}
}
