package gargantuasim

import (
	"context"
	"errors"
	"fmt"
	"sync"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/rancher/wrangler/v3/pkg/generic"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// item is one piece of Run's work: a VM to react to, or a VM set to reconcile.
type item struct{ vm, vmset string }

type workQueue = workqueue.TypedRateLimitingInterface[item]

// Run runs, until ctx ends, what this version does by itself, and returns
// once all of it has stopped: the VM set controller
// (removes its finalizer from deleting VMs, replaces a set's VMs once gone)
// and, for V3_3, the terraform service (deletes tainted VMs, empties the
// finalizers of deleting ones), and the scheduled-event controller
// (RunEvents). Like Gargantua it watches the namespace's
// VMs and acts within moments of a change; a failed write is retried with
// backoff, as Gargantua's work queues retry, except where Gargantua never
// does (removeVMSetFinalizer).
func (g *Gargantua) Run(ctx context.Context) error {
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[item]())
	informer := cache.NewSharedIndexInformer(listWatch(g.Clients.VMs, g.Namespace), &hfv1.VirtualMachine{}, 0, cache.Indexers{})
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { observe(queue, obj, false) },
		UpdateFunc: func(_, obj any) { observe(queue, obj, false) },
		DeleteFunc: func(obj any) { observe(queue, obj, true) },
	})
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer queue.ShutDown() // runs before wg.Wait: it ends the worker
	wg.Go(func() { informer.RunWithContext(ctx) })
	wg.Go(func() {
		if err := g.RunEvents(ctx); err != nil {
			utilruntime.HandleError(fmt.Errorf("gargantuasim %s: scheduled events: %w", g.Version, err))
		}
	})
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return nil // ctx ended first: a stop like any other
	}
	wg.Go(func() {
		for g.work(queue, informer.GetStore()) {
		}
	})
	<-ctx.Done()
	return nil
}

// listWatch lists and watches c's kind in namespace, for an informer.
func listWatch[T generic.RuntimeMetaObject, L runtime.Object](c generic.ClientInterface[T, L], namespace string) cache.ListerWatcher {
	return &cache.ListWatch{
		ListWithContextFunc: func(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return c.List(namespace, opts)
		},
		WatchFuncWithContext: func(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return c.Watch(namespace, opts)
		},
	}
}

// observe queues the work a VM event makes: reacting to the VM, and, once a
// VM of a set is gone, reconciling the set (it only falls short then, since
// Gargantua counts deleting VMs).
func observe(queue workQueue, obj any, gone bool) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	vm, ok := obj.(*hfv1.VirtualMachine)
	if !ok {
		return
	}
	if !gone {
		queue.Add(item{vm: vm.Name})
	}
	if set := vm.Labels[vmsetLabel]; gone && set != "" {
		queue.Add(item{vmset: set})
	}
}

// work does one item; false once the queue is shut down.
func (g *Gargantua) work(queue workQueue, vms cache.Store) bool {
	it, shutdown := queue.Get()
	if shutdown {
		return false
	}
	err := g.handle(it, vms)
	if errors.Is(err, errKeyNeverDone) {
		utilruntime.HandleError(fmt.Errorf("gargantuasim %s: %+v: %w", g.Version, it, err))
		return true // no Done, as Gargantua: the key is never processed again
	}
	defer queue.Done(it)
	if err != nil {
		// A conflict only means the cache was behind; the newer event follows.
		if !apierrors.IsConflict(err) {
			utilruntime.HandleError(fmt.Errorf("gargantuasim %s: %+v: %w", g.Version, it, err))
		}
		queue.AddRateLimited(it)
		return true
	}
	queue.Forget(it)
	return true
}

func (g *Gargantua) handle(it item, vms cache.Store) error {
	if it.vmset != "" {
		_, err := g.reconcileVMSet(it.vmset)
		return err
	}
	obj, exists, err := vms.GetByKey(g.Namespace + "/" + it.vm)
	if err != nil || !exists {
		return err
	}
	return g.reactToVM(obj.(*hfv1.VirtualMachine).DeepCopy())
}
