package app

import (
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/virtualmachine"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	"github.com/rancher/wrangler/v3/pkg/generic"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// listed is a cache whose List filters a fixed set of objects by label.
type listed[T interface {
	runtime.Object
	GetLabels() map[string]string
}] struct {
	generic.CacheInterface[T]
	objs []T
}

func (c listed[T]) List(_ string, selector labels.Selector) ([]T, error) {
	var out []T
	for _, o := range c.objs {
		if selector.Matches(labels.Set(o.GetLabels())) {
			out = append(out, o)
		}
	}
	return out, nil
}

func TestPendingFromCaches(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	ours := map[string]string{virtualmachine.ProvisionerLabel: virtualmachine.ProvisionerName}
	vm := func(name string, age time.Duration, status hfv1.VmStatus, lbls map[string]string) *hfv1.VirtualMachine {
		return &hfv1.VirtualMachine{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls, CreationTimestamp: ago(age)},
			Status:     hfv1.VirtualMachineStatus{Status: status},
		}
	}
	tainted := vm("tainted", 50*time.Minute, hfv1.VmStatusProvisioned, ours)
	tainted.Status.Tainted = true
	deleting := vm("deleting", 60*time.Minute, hfv1.VmStatusProvisioned, ours)
	deleting.DeletionTimestamp = &metav1.Time{Time: now}
	vms := listed[*hfv1.VirtualMachine]{objs: []*hfv1.VirtualMachine{
		vm("provisioned", 7*time.Minute, hfv1.VmStatusProvisioned, ours),
		vm("waiting", 3*time.Minute, hfv1.VmStatusRFP, ours),
		vm("running", 40*time.Minute, hfv1.VmStatusRunning, ours),
		vm("failed", 30*time.Minute, virtualmachine.VMStatusErrorDuringProvisioning, ours),
		vm("not-ours", 20*time.Minute, hfv1.VmStatusRFP, map[string]string{virtualmachine.ProvisionerLabel: "vsphere"}),
		tainted, deleting,
	}}
	droplet := func(name string, deletingFor time.Duration) *v1alpha1.Droplet {
		d := &v1alpha1.Droplet{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if deletingFor > 0 {
			at := ago(deletingFor)
			d.DeletionTimestamp = &at
		}
		return d
	}
	droplets := listed[*v1alpha1.Droplet]{objs: []*v1alpha1.Droplet{
		droplet("active", 0), droplet("gone-soon", 30*time.Second), droplet("stuck", 12*time.Minute),
	}}

	got := pendingFrom(vms, droplets, func() time.Time { return now })()
	want := metrics.Pending{OldestProvisioning: 7 * time.Minute, OldestDeleting: 12 * time.Minute, Deleting: 2}
	if got != want {
		t.Errorf("pending = %+v, want %+v (only our VMs on their way to running count)", got, want)
	}

	empty := pendingFrom(listed[*hfv1.VirtualMachine]{}, listed[*v1alpha1.Droplet]{}, time.Now)()
	if empty != (metrics.Pending{}) {
		t.Errorf("nothing cached: %+v, want zeros", empty)
	}
}
