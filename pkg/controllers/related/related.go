// Package related re-queues objects when an object they depend on is
// written.
package related

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
)

// OnWrite calls handle with each object of informer that is added, deleted
// or written (its resourceVersion changed), and not when its own controller
// merely looks at it again. Wrangler's relatedresource.Watch runs on every
// pass of the watched object's handlers, EnqueueAfter resyncs included: with
// a thousand booting droplets re-read every second, it re-ran the VM handler
// thousands of times a second for nothing.
func OnWrite(informer cache.SharedIndexInformer, handle func(namespace, name string)) {
	OnChange(informer, func(obj any) any {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil
		}
		return m.GetResourceVersion()
	}, handle)
}

// OnChange is OnWrite for dependents that read only part of an object:
// an update calls handle only when view, the part they read, differs.
func OnChange(informer cache.SharedIndexInformer, view func(obj any) any, handle func(namespace, name string)) {
	call := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if m, err := meta.Accessor(obj); err == nil {
			handle(m.GetNamespace(), m.GetName())
		}
	}
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: call,
		UpdateFunc: func(old, obj any) {
			if !equality.Semantic.DeepEqual(view(old), view(obj)) {
				call(obj)
			}
		},
		DeleteFunc: call,
	})
}
