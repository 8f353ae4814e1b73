package gargantuasim

import (
	"errors"
	"fmt"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/rancher/wrangler/v3/pkg/generic"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
)

// ErrSessionTainted marks a failure on the claim path: Gargantua's claim
// controller gives up and taints the user's session (EndSession plays out
// what follows).
var ErrSessionTainted = errors.New("gargantua would taint the session")

// ErrLeftWithoutStatus marks a failed status write on the VM set path:
// Gargantua only logs it, and the VM stays without status.
var ErrLeftWithoutStatus = errors.New("gargantua would leave the VM without status")

// readyForProvisioning is the status Gargantua writes right after it creates
// a VM; allocated tells a claimed VM from a free VM of a set.
func readyForProvisioning(env *hfv1.Environment, allocated bool) hfv1.VirtualMachineStatus {
	return hfv1.VirtualMachineStatus{
		Status:        hfv1.VmStatusRFP,
		Allocated:     allocated,
		Tainted:       false,
		EnvironmentId: env.Name,
		WsEndpoint:    env.Spec.WsEndpoint,
	}
}

// writeFirstStatus writes status to a VM Gargantua has just created, with the
// resourceVersion the create returned, so any write in between conflicts.
// Versions that retry then read the VM again and rewrite its whole status.
func (c *Clients) writeFirstStatus(created *hfv1.VirtualMachine, status hfv1.VirtualMachineStatus, retries bool) (*hfv1.VirtualMachine, error) {
	vm := created.DeepCopy()
	vm.Status = status
	updated, err := c.VMs.UpdateStatus(vm)
	if retries && apierrors.IsConflict(err) {
		updated, err = retryWrite(c.VMs, created.Namespace, created.Name, true,
			func(vm *hfv1.VirtualMachine) { vm.Status = status })
	}
	if err != nil {
		return nil, fmt.Errorf("writing status of VM %s after its create (resourceVersion %s): %w",
			created.Name, created.ResourceVersion, err)
	}
	return updated, nil
}

// retryWrite reads an object, changes it and writes it back (the status
// subresource if status), reading again on conflict: Gargantua's
// retry.RetryOnConflict loops.
func retryWrite[T generic.RuntimeMetaObject, L runtime.Object](c generic.ClientInterface[T, L],
	namespace, name string, status bool, change func(T)) (T, error) {
	var written T
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := c.Get(namespace, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(obj)
		if status {
			written, err = c.UpdateStatus(obj)
		} else {
			written, err = c.Update(obj)
		}
		return err
	})
	return written, err
}
