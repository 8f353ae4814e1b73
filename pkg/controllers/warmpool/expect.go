package warmpool

import (
	"sync"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
)

// expectations remember the members each pool created that its Droplet
// cache may not show yet, so the next pass does not create them again.
// A name the cache never shows is forgotten after partialGrace.
type expectations struct {
	mu      sync.Mutex
	created map[types.UID]map[string]time.Time
}

func (e *expectations) add(pool types.UID, name string, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.created == nil {
		e.created = map[types.UID]map[string]time.Time{}
	}
	if e.created[pool] == nil {
		e.created[pool] = map[string]time.Time{}
	}
	e.created[pool][name] = now
}

// unseen counts the pool's created members missing from members, and
// forgets those the cache shows or that are too old to wait for.
func (e *expectations) unseen(pool types.UID, members []*v1alpha1.Droplet, now time.Time) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	names := e.created[pool]
	for _, d := range members {
		delete(names, d.Name)
	}
	for name, at := range names {
		if now.Sub(at) > partialGrace {
			delete(names, name)
		}
	}
	return len(names)
}

func (e *expectations) forget(pool types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.created, pool)
}
