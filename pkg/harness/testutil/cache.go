package testutil

import (
	"github.com/rancher/wrangler/v3/pkg/generic"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// NamedCache is a cache of a few objects, by name, whatever the namespace;
// only Get and List are served.
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

// List returns every object, whatever the namespace and selector.
func (c NamedCache[T]) List(string, labels.Selector) ([]T, error) {
	out := make([]T, 0, len(c.Objs))
	for _, o := range c.Objs {
		out = append(out, o)
	}
	return out, nil
}
