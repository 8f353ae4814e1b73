package warmpool

import (
	"slices"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// Event reasons on a WarmPool.
const (
	ReasonPoolWanted   = "PoolWanted"
	ReasonPoolDraining = "PoolDraining"
)

// countMembers fills ready and booting from the members that count.
func countMembers(pool *v1alpha1.WarmPool, members []*v1alpha1.Droplet, status *v1alpha1.WarmPoolStatus) {
	status.Ready, status.Booting = 0, 0
	for _, d := range members {
		switch {
		case !current(pool, d):
		case ready(d):
			status.Ready++
		default:
			status.Booting++
		}
	}
}

// writeStatus records status when it changed, with an Event when the
// target or why it is so did, and updates the pool's metrics.
func (h *handler) writeStatus(pool *v1alpha1.WarmPool, status v1alpha1.WarmPoolStatus) (*v1alpha1.WarmPool, error) {
	env, template := pool.Spec.Environment, pool.Spec.Template
	metrics.WarmPoolSize.WithLabelValues(env, template, metrics.WarmPoolWanted).Set(float64(status.Wanted))
	metrics.WarmPoolSize.WithLabelValues(env, template, metrics.WarmPoolReady).Set(float64(status.Ready))
	metrics.WarmPoolSize.WithLabelValues(env, template, metrics.WarmPoolBooting).Set(float64(status.Booting))
	if equality.Semantic.DeepEqual(pool.Status, status) {
		return pool, nil
	}
	before := pool.Status
	updated := pool.DeepCopy()
	updated.Status = status
	updated, err := h.pools.UpdateStatus(updated)
	if err != nil {
		return pool, err
	}
	// A new pool's first message is no news unless it wants members.
	switch {
	case status.Wanted == before.Wanted && (status.Message == before.Message || before.Message == ""):
	case status.Wanted == 0:
		h.recorder.Event(updated, corev1.EventTypeNormal, ReasonPoolDraining, "draining: "+status.Message)
	default:
		h.recorder.Event(updated, corev1.EventTypeNormal, ReasonPoolWanted, status.Message)
	}
	return updated, nil
}

// accountDropletTime adds the time since the pool's last pass for each
// unclaimed member that has a droplet.
func (h *handler) accountDropletTime(pool *v1alpha1.WarmPool, members []*v1alpha1.Droplet, now time.Time) {
	last, seen := h.lastPass.Swap(pool.UID, now)
	if !seen {
		return
	}
	n := len(slices.DeleteFunc(slices.Clone(members), func(d *v1alpha1.Droplet) bool {
		return d.Status.DropletID == 0 || d.Status.Claim != nil
	}))
	if n > 0 {
		metrics.WarmPoolDropletSeconds.WithLabelValues(pool.Spec.Environment, pool.Spec.Template).
			Add(float64(n) * now.Sub(last.(time.Time)).Seconds())
	}
}
