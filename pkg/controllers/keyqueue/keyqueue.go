// Package keyqueue runs work on namespace/name keys from a queue of its own,
// with its own workers, for work that must not wait its turn in a
// controller's queue (first in, first out, and filled by floods of new
// objects): deleted VMs' cleanups and early droplet deletes.
package keyqueue

import (
	"context"
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Options shape a Queue.
type Options struct {
	// Name names the queue in the workqueue metrics.
	Name string
	// Workers process keys at once (1 when less).
	Workers int
	// MaxRetries bounds the retries of a key whose work keeps failing; 0
	// retries it until it succeeds.
	MaxRetries int
	// Backoff spaces a failed key's retries when its work names no delay;
	// nil: client-go's controller default.
	Backoff workqueue.TypedRateLimiter[string]
}

// Work processes one key. It returns when to process the key again (0: not
// unless it is added again), or an error to retry it: after the returned
// delay when there is one, else after the queue's backoff.
type Work func(key string) (again time.Duration, err error)

// Queue is a started queue; Add puts keys on it.
type Queue struct {
	opts  Options
	queue workqueue.TypedRateLimitingInterface[string]
	work  Work
}

// Start starts o.Workers workers, which wait for synced before the first
// key, and stops them when ctx ends.
func Start(ctx context.Context, o Options, work Work, synced ...cache.InformerSynced) *Queue {
	if o.Backoff == nil {
		o.Backoff = workqueue.DefaultTypedControllerRateLimiter[string]()
	}
	q := &Queue{opts: o, work: work, queue: workqueue.NewTypedRateLimitingQueueWithConfig(o.Backoff,
		workqueue.TypedRateLimitingQueueConfig[string]{Name: o.Name})}
	go func() {
		<-ctx.Done()
		q.queue.ShutDown()
	}()
	for range max(o.Workers, 1) {
		go q.run(ctx, synced)
	}
	return q
}

// Add queues key; a key already waiting is not queued twice.
func (q *Queue) Add(key string) { q.queue.Add(key) }

func (q *Queue) run(ctx context.Context, synced []cache.InformerSynced) {
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
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

func (q *Queue) process(key string) {
	again, err := q.work(key)
	switch {
	case err != nil && q.opts.MaxRetries > 0 && q.queue.NumRequeues(key) >= q.opts.MaxRetries:
		q.queue.Forget(key)
	case err != nil && again > 0:
		q.opts.Backoff.When(key) // counts the retry; the work named the delay
		q.queue.AddAfter(key, again)
	case err != nil:
		q.queue.AddRateLimited(key)
	case again > 0:
		q.queue.Forget(key)
		q.queue.AddAfter(key, again)
	default:
		q.queue.Forget(key)
	}
}
