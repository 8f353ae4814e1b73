package virtualmachine

import (
	"fmt"
	"slices"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
)

// GargantuaVMSetFinalizer is the finalizer Gargantua's VM set controller puts
// on every VM of a scheduled event and removes once the VM is deleting.
// Gargantua v3.0.1-rc0 removes it with a GET and a full UPDATE that it never
// retries: when another client writes the VM between the two, the UPDATE
// conflicts and that VM's work-queue key is never marked done, so Gargantua
// never looks at the VM again and it stays Terminating until Gargantua
// restarts. So no write of ours may reach a deleting VM while it is there.
const GargantuaVMSetFinalizer = "finalizer.hobbyfarm.io/vmset"

// GargantuaFinalizerWait bounds how long the release of our finalizer waits
// for Gargantua's, counted from the VM's deletion. Gargantua removes its own
// within a second; one still there after this is stuck or its Gargantua is
// down, and waiting longer would keep our finalizer for nothing.
const GargantuaFinalizerWait = 2 * time.Minute

// gargantuaFinalizerPoll re-checks a VM waiting for Gargantua's finalizer in
// case the watch event of its removal is missed.
const gargantuaFinalizerPoll = 5 * time.Second

// waitForGargantua is how long the release of a deleting VM's finalizer must
// still wait for Gargantua's own to go (0: release now).
func waitForGargantua(vm *hfv1.VirtualMachine, now time.Time) time.Duration {
	if !slices.Contains(vm.Finalizers, GargantuaVMSetFinalizer) || vm.DeletionTimestamp == nil {
		return 0
	}
	left := vm.DeletionTimestamp.Add(GargantuaFinalizerWait).Sub(now)
	if left <= 0 {
		return 0
	}
	return min(left, gargantuaFinalizerPoll)
}

// gargantuaFinalizerStuck says why our finalizer goes while Gargantua's
// stays, and what the operator does about it.
func gargantuaFinalizerStuck() string {
	return fmt.Sprintf("the droplet and key are deleted, but Gargantua's finalizer %s is still on the VM %s after its deletion: "+
		"releasing ours; the VM now waits only for Gargantua (restart Gargantua's pod if it stays Terminating)",
		GargantuaVMSetFinalizer, GargantuaFinalizerWait)
}
