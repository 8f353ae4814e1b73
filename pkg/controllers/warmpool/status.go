package warmpool

import (
	"fmt"
	"math/bits"
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
	if a := status.Auto; a != nil {
		metrics.WarmPoolAuto(env, template, a.ArrivalsPerMinute, a.RefillSeconds)
	} else {
		metrics.ForgetWarmPoolAuto(env, template)
	}
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
	switch {
	case !isNews(pool.Spec.Auto, before, status):
	case status.Wanted == 0:
		h.recorder.Event(updated, corev1.EventTypeNormal, ReasonPoolDraining, "draining: "+status.Message)
	default:
		h.recorder.Event(updated, corev1.EventTypeNormal, ReasonPoolWanted, status.Message+autoMessage(status.Auto))
	}
	return updated, nil
}

// magnitudeChanged: an auto-sized pool's target follows every arrival, so
// only a change of its order of magnitude (0, 1, 2–3, 4–7, 8–15, …) is
// told.
func magnitudeChanged(before, after int) bool {
	return bits.Len(uint(before)) != bits.Len(uint(after))
}

func autoMessage(a *v1alpha1.WarmPoolAutoStatus) string {
	if a == nil {
		return ""
	}
	return fmt.Sprintf(" (auto, %s: %.1f arrivals a minute, refill %d s)", a.Basis, a.ArrivalsPerMinute, a.RefillSeconds)
}

// isNews says whether a status change deserves an Event: a new target,
// or a new reason for it (a new pool's first message is no news unless it
// wants members).
func isNews(auto bool, before, after v1alpha1.WarmPoolStatus) bool {
	if auto {
		return magnitudeChanged(before.Wanted, after.Wanted)
	}
	return before.Wanted != after.Wanted || (after.Message != before.Message && before.Message != "")
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
