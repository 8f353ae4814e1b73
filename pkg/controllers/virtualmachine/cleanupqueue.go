package virtualmachine

import (
	"context"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/keyqueue"
	"github.com/sirupsen/logrus"
	"k8s.io/client-go/tools/cache"
)

// startCleanupQueue runs deleting VMs' cleanups on a queue of their own. A
// finished event's deletions take several API calls each (deletes,
// confirming reads, the finalizer); on the VM queue, which is first in,
// first out, they would hold up the next event's new VMs by seconds. Here
// they wait only for each other.
func startCleanupQueue(ctx context.Context, h *handler, workers int, synced ...cache.InformerSynced) *keyqueue.Queue {
	return keyqueue.Start(ctx, keyqueue.Options{Name: "vm-cleanup", Workers: workers}, h.cleanUpLogged, synced...)
}

// cleanUpLogged is cleanUp for the queue, with a failure logged: the key
// is namespace/name, and the logs name VMs by name alone.
func (h *handler) cleanUpLogged(key string) (time.Duration, error) {
	recheck, err := h.cleanUp(key)
	if err != nil {
		_, name, _ := cache.SplitMetaNamespaceKey(key)
		logrus.WithField("vm", name).WithError(err).Info("VM cleanup failed; retrying")
	}
	return recheck, err
}

// noRecheck: the key needs no further pass unless a watch queues it.
const noRecheck time.Duration = 0
