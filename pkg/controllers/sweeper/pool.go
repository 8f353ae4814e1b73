package sweeper

import (
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"k8s.io/apimachinery/pkg/labels"
)

// vmUIDs are the VM UIDs a droplet's tags name: one, or two for a warm
// pool droplet a VM took under an earlier version, which tagged it for the
// VM too (the member's identity, then the VM's).
func vmUIDs(tags []string) []string {
	var out []string
	for _, t := range tags {
		if uid := digitalocean.VMUIDFromTags([]string{t}); uid != "" {
			out = append(out, uid)
		}
	}
	return out
}

// liveMembers are the identities (set) of the pool members whose WarmPool
// exists. A member whose pool is gone (its Environment deleted) is not
// among them, so its droplet goes like any orphan's; one a VM took keeps
// the member's identity and is judged by the VM whose Droplet holds its ID
// (records). A batch-created member carries no
// identity tag and is found through batchClaims, like a VM's.
func (s *sweeper) liveMembers() map[string]bool {
	pools := map[string]bool{}
	all, err := s.pools.List(s.opts.Namespace, labels.Everything())
	if err != nil {
		return nil
	}
	for _, p := range all {
		pools[string(p.UID)] = true
	}
	out := map[string]bool{}
	droplets, err := s.droplets.List(s.opts.Namespace, labels.Everything())
	if err != nil {
		return nil
	}
	for _, d := range droplets {
		if d.Spec.Pool == nil || d.Spec.VirtualMachine != "" {
			continue
		}
		for _, t := range d.Spec.Tags {
			if uid, ok := digitalocean.PoolUIDOfTag(t); ok && pools[uid] {
				out[digitalocean.VMUIDFromTags(d.Spec.Tags)] = true
			}
		}
	}
	return out
}
