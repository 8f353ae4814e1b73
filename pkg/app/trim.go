package app

import (
	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
)

// trimCaches drops what no handler reads from every object the informers
// keep: managedFields, often a third of an object's size, which at 10,000
// VMs (with their Droplets and Secrets) is tens of MiB. Updates sent from a
// trimmed copy leave the server's managedFields as they are.
func trimCaches(informers ...cache.SharedIndexInformer) {
	for _, informer := range informers {
		if err := informer.SetTransform(dropManagedFields); err != nil {
			// Only an informer already running refuses; it keeps full objects.
			logrus.WithError(err).Warn("cannot trim an informer's cache")
		}
	}
}

func dropManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
