package virtualmachine

import (
	"context"
	"time"

	"github.com/sirupsen/logrus"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// cleanupQueue runs deleting VMs' cleanups. A finished event's deletions
// take several API calls each (deletes, confirming reads, the finalizer);
// on the VM queue, which is first in, first out, they would hold up the
// next event's new VMs by seconds. Here they wait only for each other.
type cleanupQueue struct {
	h      *handler
	queue  workqueue.TypedRateLimitingInterface[string]
	synced []cache.InformerSynced
}

func startCleanupQueue(ctx context.Context, h *handler, workers int, synced ...cache.InformerSynced) *cleanupQueue {
	q := &cleanupQueue{h: h, synced: synced,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "vm-cleanup"})}
	go func() {
		<-ctx.Done()
		q.queue.ShutDown()
	}()
	for range max(workers, 1) {
		go q.run(ctx)
	}
	return q
}

// add queues the deleting VM key (namespace/name); a key already waiting is
// not queued twice.
func (q *cleanupQueue) add(key string) { q.queue.Add(key) }

func (q *cleanupQueue) run(ctx context.Context) {
	if !cache.WaitForCacheSync(ctx.Done(), q.synced...) {
		return
	}
	for {
		key, shutdown := q.queue.Get()
		if shutdown {
			return
		}
		q.process(key)
		q.queue.Done(key)
	}
}

func (q *cleanupQueue) process(key string) {
	recheck, err := q.h.cleanUp(key)
	switch {
	case err != nil:
		// The key is namespace/name; the logs name VMs by name alone.
		_, name, _ := cache.SplitMetaNamespaceKey(key)
		logrus.WithField("vm", name).WithError(err).Info("VM cleanup failed; retrying")
		q.queue.AddRateLimited(key)
	case recheck > 0:
		q.queue.Forget(key)
		q.queue.AddAfter(key, recheck)
	default:
		q.queue.Forget(key)
	}
}

// noRecheck: the key needs no further pass unless a watch queues it.
const noRecheck time.Duration = 0
