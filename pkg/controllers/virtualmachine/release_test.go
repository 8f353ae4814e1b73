package virtualmachine

import (
	"testing"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/finalizer"
	hfcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io/v1"
	corecontrollers "github.com/rancher/wrangler/v3/pkg/generated/controllers/core/v1"
	"github.com/rancher/wrangler/v3/pkg/generic"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
)

// patchOnlyVMs answers a VM patch with err; nothing else is called.
type patchOnlyVMs struct {
	hfcontrollers.VirtualMachineController
	err     error
	patches int
}

func (f *patchOnlyVMs) Patch(_, _ string, _ types.PatchType, _ []byte, _ ...string) (*hfv1.VirtualMachine, error) {
	f.patches++
	if f.err != nil {
		return nil, f.err
	}
	return &hfv1.VirtualMachine{}, nil
}

// noSecrets has no Secret cached.
type noSecrets struct {
	corecontrollers.SecretController
}

type noSecretCache struct{ corecontrollers.SecretCache }

func (noSecrets) Cache() generic.CacheInterface[*corev1.Secret] { return noSecretCache{} }
func (noSecretCache) Get(_, name string) (*corev1.Secret, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

// A pass that finds its VM gone when it releases it (an earlier pass, sent
// again by a cache lagging that release, or Gargantua stripping every
// finalizer) does not repeat the release's Event.
func TestReleaseOfAGoneVMRecordsNothing(t *testing.T) {
	now := metav1.Now()
	vm := &hfv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "ns", UID: "u1",
		ResourceVersion: "7", DeletionTimestamp: &now, Finalizers: []string{finalizer.Of(finalizer.VMCleanupHandler)}}}
	for _, c := range []struct {
		name   string
		err    error
		events int
	}{
		{"released now", nil, 1},
		{"gone already", apierrors.NewNotFound(schema.GroupResource{Resource: "virtualmachines"}, "vm"), 0},
	} {
		recorder := record.NewFakeRecorder(10)
		vms := &patchOnlyVMs{err: c.err}
		h := &handler{vms: vms, secrets: noSecrets{}, recorder: recorder}
		if err := h.release(vm, nil); err != nil {
			t.Fatalf("%s: release: %v", c.name, err)
		}
		if vms.patches != 1 {
			t.Errorf("%s: %d finalizer patches, want 1", c.name, vms.patches)
		}
		if n := len(recorder.Events); n != c.events {
			t.Errorf("%s: %d Events, want %d", c.name, n, c.events)
		}
	}
}
