package warmpool

import (
	"slices"
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var epoch = time.Unix(1_000_000, 0)

// member is a member made ageMinutes ago from request hash.
func member(name, hash string, ageMinutes int, isReady bool) *v1alpha1.Droplet {
	d := &v1alpha1.Droplet{ObjectMeta: metav1.ObjectMeta{Name: name,
		CreationTimestamp: metav1.NewTime(epoch.Add(-time.Duration(ageMinutes) * time.Minute))},
		Spec: v1alpha1.DropletSpec{Name: name, Pool: &v1alpha1.PoolMembership{Name: "p", RequestHash: hash}}}
	if isReady {
		events.SetCondition(d, v1alpha1.Ready, true, "Active", "")
		events.SetCondition(d, v1alpha1.Reachable, true, "LoggedIn", "")
	}
	return d
}

func names(ds []*v1alpha1.Droplet) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.Name)
	}
	return out
}

func TestDrainOrderNotReadyFirstThenOldest(t *testing.T) {
	got := names(drainOrder([]*v1alpha1.Droplet{
		member("ready-new", "h", 1, true),
		member("ready-old", "h", 9, true),
		member("booting-new", "h", 0, false),
		member("booting-old", "h", 2, false),
	}))
	want := []string{"booting-old", "booting-new", "ready-old", "ready-new"}
	if !slices.Equal(got, want) {
		t.Errorf("drain order %v, want %v", got, want)
	}
}

func TestToDrain(t *testing.T) {
	pool := &v1alpha1.WarmPool{Spec: v1alpha1.WarmPoolSpec{RequestHash: "new"}}
	claimedStale := member("claimed-old-request", "old", 30, true)
	claimedStale.Status.Claim = &v1alpha1.ClaimRef{VirtualMachine: "vm", UID: "u"}
	deleting := member("deleting", "new", 40, true)
	deleting.DeletionTimestamp = &metav1.Time{Time: epoch}
	members := []*v1alpha1.Droplet{
		member("stale", "old", 1, true),
		claimedStale,
		deleting,
		member("a", "new", 5, true),
		member("b", "new", 4, true),
		member("c", "new", 3, true),
	}
	for wanted, want := range map[int][]string{
		3: {"stale"},
		2: {"stale", "a"},
		0: {"stale", "a", "b", "c"},
		9: {"stale"},
	} {
		got := names(toDrain(pool, members, wanted))
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("wanted %d: drains %v, want %v (never a claimed or deleting member)", wanted, got, want)
		}
	}
}

func TestReadyNeedsReachableAndNoClaim(t *testing.T) {
	d := member("m", "h", 1, true)
	if !ready(d) {
		t.Fatal("a Ready and Reachable member is not ready")
	}
	events.SetCondition(d, v1alpha1.Reachable, false, "Probing", "")
	if ready(d) {
		t.Error("a member not Reachable counts as ready")
	}
	d = member("m", "h", 1, true)
	d.Status.Claim = &v1alpha1.ClaimRef{VirtualMachine: "vm"}
	if ready(d) {
		t.Error("a claimed member counts as ready")
	}
}
