package warmpool

import (
	"slices"
	"strings"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
)

// ready is a member a VM may take: checked like a VM's droplet, unclaimed
// and not going away.
func ready(d *v1alpha1.Droplet) bool {
	return d.DeletionTimestamp == nil && d.Status.Claim == nil &&
		v1alpha1.Ready.IsTrue(d) && v1alpha1.Reachable.IsTrue(d)
}

// live is a member that counts towards the pool's size.
func live(d *v1alpha1.Droplet) bool { return d.DeletionTimestamp == nil && d.Status.Claim == nil }

// current is a live member made from the pool's present request.
func current(pool *v1alpha1.WarmPool, d *v1alpha1.Droplet) bool {
	return live(d) && d.Spec.Pool != nil && d.Spec.Pool.RequestHash == pool.Spec.RequestHash
}

// drainOrder sorts members in the order a shrinking pool deletes them:
// those not ready yet first (nobody can take them), then the oldest.
func drainOrder(members []*v1alpha1.Droplet) []*v1alpha1.Droplet {
	out := slices.Clone(members)
	slices.SortStableFunc(out, func(a, b *v1alpha1.Droplet) int {
		if ra, rb := ready(a), ready(b); ra != rb {
			if ra {
				return 1
			}
			return -1
		}
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// toDrain are the members a pass deletes without a claim: live ones made
// from an older request, and the current ones beyond wanted.
func toDrain(pool *v1alpha1.WarmPool, members []*v1alpha1.Droplet, wanted int) []*v1alpha1.Droplet {
	var stale, fresh []*v1alpha1.Droplet
	for _, d := range members {
		switch {
		case !live(d):
		case current(pool, d):
			fresh = append(fresh, d)
		default:
			stale = append(stale, d)
		}
	}
	if extra := len(fresh) - wanted; extra > 0 {
		stale = append(stale, drainOrder(fresh)[:extra]...)
	}
	return stale
}
