package warmpool

import (
	"fmt"
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// claimableAfter is a member created at created that became reachable took later.
func claimableAfter(name string, created time.Time, took time.Duration) *v1alpha1.Droplet {
	d := &v1alpha1.Droplet{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(created)}}
	d.Status.DropletID = 1
	events.SetCondition(d, v1alpha1.Ready, true, "Active", "")
	events.SetCondition(d, v1alpha1.Reachable, true, "Reachable", "")
	for i := range d.Status.Conditions {
		d.Status.Conditions[i].LastTransitionTime = created.Add(took).UTC().Format(time.RFC3339)
	}
	return d
}

func TestRefillTimeFollowsRecentMembers(t *testing.T) {
	var r refills
	pool := types.UID("pool")
	if got := r.estimate(pool); got != defaultRefill {
		t.Fatalf("before any member: %v, want the default %v", got, defaultRefill)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r.note(pool, []*v1alpha1.Droplet{claimableAfter("a", start, 33*time.Second), claimableAfter("b", start, 31*time.Second)})
	if got := r.estimate(pool); got != 33*time.Second {
		t.Fatalf("two refills: %v, want the longer, 33s", got)
	}
	// Boots get slower: the estimate follows within one window of samples.
	for i := range refillSamples {
		r.note(pool, []*v1alpha1.Droplet{claimableAfter(fmt.Sprint("slow", i), start, 65*time.Second)})
	}
	if got := r.estimate(pool); got != 65*time.Second {
		t.Fatalf("after %d slower refills: %v, want 65s", refillSamples, got)
	}
	// A member is counted once, however many passes see it.
	for range 3 {
		r.note(pool, []*v1alpha1.Droplet{claimableAfter("fast", start, 20*time.Second)})
	}
	if n := len(r.byPool[pool].recent); n != refillSamples {
		t.Fatalf("%d samples kept, want %d", n, refillSamples)
	}
	if got := r.estimate(pool); got != 65*time.Second {
		t.Fatalf("one fast refill among slow ones: %v, want the 90th percentile, 65s", got)
	}
}
