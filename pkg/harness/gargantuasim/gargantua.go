package gargantuasim

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// Gargantua plays one Gargantua version in one namespace (its release
// namespace). The session server and the claim, session and scheduled-event
// controllers are calls made in Gargantua's order (StartSession,
// BindStaticVM, EndSession, CreateVMSet, DeleteVMSet); Run runs what reacts
// to VMs by itself: the VM set controller and, for V3_3, the terraform
// service. Deleting owners' VMs is left to kube-controller-manager's garbage
// collector, as in a cluster.
type Gargantua struct {
	Clients   *Clients
	Namespace string
	Version   Version
	// SessionEvent is the scheduled event StartSession's sessions belong to
	// (label hobbyfarm.io/scheduledevent). New sets "on-demand".
	SessionEvent string
	// VMSetFinalizerPause is how long the VM set controller of v3.0.1-rc0 and
	// earlier waits between its GET of a deleting VM and the UPDATE that
	// removes its finalizer. Gargantua does not wait; tests widen the window
	// in which another client's write makes that UPDATE fail for good.
	VMSetFinalizerPause time.Duration

	// vmsetWorker serializes VM set reconciles, as Gargantua's single VM set
	// worker does, so no two make the same replacement.
	vmsetWorker sync.Mutex
	// betweenCreateAndStatus, if set, runs between a VM's create and its
	// first status write: tests write to the VM there, as a careless
	// provisioner would.
	betweenCreateAndStatus func(*hfv1.VirtualMachine)
}

// New returns a Gargantua of version acting in namespace; nothing runs until Run.
func New(cfg *rest.Config, namespace string, version Version) (*Gargantua, error) {
	c, err := NewClients(cfg)
	if err != nil {
		return nil, err
	}
	return &Gargantua{Clients: c, Namespace: namespace, Version: version, SessionEvent: "on-demand"}, nil
}

// createVM creates vm and then writes its first status, the two calls of
// both of Gargantua's paths. On a status error it returns the VM as created.
func (g *Gargantua) createVM(vm *hfv1.VirtualMachine, status hfv1.VirtualMachineStatus, retries bool) (*hfv1.VirtualMachine, error) {
	created, err := g.Clients.VMs.Create(vm)
	if err != nil {
		return nil, fmt.Errorf("creating VM %s: %w", vm.Name, err)
	}
	if g.betweenCreateAndStatus != nil {
		g.betweenCreateAndStatus(created)
	}
	updated, err := g.Clients.writeFirstStatus(created, status, retries)
	if err != nil {
		return created, err
	}
	return updated, nil
}

// ownedBy is the owner reference Gargantua sets: not as controller, and
// without blockOwnerDeletion.
func ownedBy(kind string, owner metav1.Object) []metav1.OwnerReference {
	return []metav1.OwnerReference{{
		APIVersion: hfv1.SchemeGroupVersion.String(), Kind: kind, Name: owner.GetName(), UID: owner.GetUID(),
	}}
}

// randomSuffix is the random part of the names Gargantua generates.
func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
