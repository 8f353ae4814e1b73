package testutil

import (
	"github.com/rancher/wrangler/v3/pkg/generic"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// NamedCache is a cache of a few objects, by name, whatever the namespace;
// only Get is served.
type NamedCache[T runtime.Object] struct {
	generic.CacheInterface[T]
	Objs map[string]T
}

func (c NamedCache[T]) Get(_, name string) (T, error) {
	obj, ok := c.Objs[name]
	if !ok {
		return obj, apierrors.NewNotFound(schema.GroupResource{}, name)
	}
	return obj, nil
}
