package reliability

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// sharedKeyEnv is an Environment whose VMs share one key, so their droplets
// are multi-created and known by ID alone: the ones a batched delete takes.
func (w *world) sharedKeyEnv(name string) *hfv1.Environment {
	return w.env(name, map[string]string{"region": "nyc1", "token-secret": tokenSecretName, "ssh_key_scope": "environment"})
}

// dropletIDs are the droplet IDs the VMs' Droplets recorded, by VM name.
func (w *world) dropletIDs(names []string) map[string]int {
	w.t.Helper()
	out := map[string]int{}
	for _, n := range names {
		d, err := w.drops.Get(w.ns, n, metav1.GetOptions{})
		if err != nil || d.Status.DropletID == 0 {
			w.t.Fatalf("%s: no droplet ID on record (%v)", n, err)
		}
		out[n] = d.Status.DropletID
	}
	return out
}

// deleteTagged are the droplet IDs any one-off delete tag request named,
// with the earliest time each was named.
func (w *world) deleteTagged() map[int]time.Time {
	out := map[int]time.Time{}
	for _, r := range w.do.TagResourcesRecords(w.token) {
		if !digitalocean.IsDeleteTag(r.Tag) {
			continue
		}
		for _, id := range r.DropletIDs {
			if at, ok := out[id]; !ok || r.Time.Before(at) {
				out[id] = r.Time
			}
		}
	}
	return out
}

// liveIDs are the IDs of the droplets DigitalOcean holds, sorted.
func (w *world) liveIDs() []int {
	var out []int
	for _, d := range w.liveDroplets() {
		out = append(out, d.id)
	}
	sort.Ints(out)
	return out
}

// deletedVMsGone is "" once the VMs and their Droplets are gone from
// Kubernetes and their droplets from DigitalOcean.
func (w *world) deletedVMsGone(ids map[string]int) string {
	live := w.liveIDs()
	for name, id := range ids {
		if slices.Contains(live, id) {
			return fmt.Sprintf("%s's droplet %d still exists", name, id)
		}
		if _, err := w.hf.VMs.Get(w.ns, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Sprintf("VM %s still exists (%v)", name, err)
		}
		if _, err := w.drops.Get(w.ns, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Sprintf("Droplet %s still exists (%v)", name, err)
		}
	}
	return ""
}

// releaseWatch samples, for deleted VMs, whether a VM or its Droplet left
// Kubernetes (its finalizer released) while DigitalOcean still held its
// droplet: the finalizer must go only after DigitalOcean accepted the delete.
type releaseWatch struct {
	*sampler
	mu         sync.Mutex
	violations []string
	samples    int
}

func (w *world) watchReleases(ids map[string]int) *releaseWatch {
	rw := &releaseWatch{}
	rw.sampler = w.sample(50*time.Millisecond, func() {
		// Kubernetes first: a droplet live after its object was seen gone
		// was live when it went.
		var gone []string
		for name := range ids {
			_, vmErr := w.hf.VMs.Get(w.ns, name, metav1.GetOptions{})
			_, dErr := w.drops.Get(w.ns, name, metav1.GetOptions{})
			if apierrors.IsNotFound(vmErr) || apierrors.IsNotFound(dErr) {
				gone = append(gone, name)
			}
		}
		live := w.liveIDs()
		rw.mu.Lock()
		defer rw.mu.Unlock()
		rw.samples++
		for _, name := range gone {
			if slices.Contains(live, ids[name]) {
				rw.violations = append(rw.violations, fmt.Sprintf("%s left Kubernetes while droplet %d existed", name, ids[name]))
			}
		}
	})
	return rw
}

// check fails the test on any release before the delete.
func (rw *releaseWatch) check(w *world) {
	w.t.Helper()
	rw.halt()
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if len(rw.violations) > 0 {
		w.t.Errorf("finalizers released before DigitalOcean accepted the delete: %s", strings.Join(first(rw.violations, 5), "; "))
	}
	if rw.samples < 3 {
		w.t.Errorf("only %d release samples taken", rw.samples)
	}
}

// deleteEnvAndWaitAllGone deletes the Environment, whose shared key goes
// with it, and waits until nothing is left.
func (w *world) deleteEnvAndWaitAllGone(env *hfv1.Environment, timeout time.Duration) {
	w.t.Helper()
	if err := w.hf.Envs.Delete(w.ns, env.Name, nil); err != nil {
		w.t.Fatal(err)
	}
	w.waitAllGone(timeout)
}
