package droplet

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	"github.com/rancher/wrangler/v3/pkg/generic"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// enqueueRecorder is a Droplet controller that remembers what was enqueued.
type enqueueRecorder struct {
	provcontrollers.DropletController
	cache    generic.CacheInterface[*v1alpha1.Droplet]
	mu       sync.Mutex
	enqueued []string
}

func (c *enqueueRecorder) Cache() generic.CacheInterface[*v1alpha1.Droplet] { return c.cache }

func (c *enqueueRecorder) Enqueue(namespace, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.enqueued = append(c.enqueued, namespace+"/"+name)
}

// batchWorld is a handler with a delete batcher over a fake DigitalOcean,
// and caches the test fills.
type batchWorld struct {
	t        *testing.T
	do       *fakedo.Server
	h        *handler
	r        *reaper
	vms      map[string]*hfv1.VirtualMachine
	droplets map[string]*v1alpha1.Droplet
	queue    *enqueueRecorder
}

func newBatchWorld(t *testing.T) *batchWorld {
	t.Helper()
	do := newDeleteFake(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w := &batchWorld{t: t, do: do, vms: map[string]*hfv1.VirtualMachine{}, droplets: map[string]*v1alpha1.Droplet{}}
	w.queue = &enqueueRecorder{cache: testutil.NamedCache[*v1alpha1.Droplet]{Objs: w.droplets}}
	token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "token"}, Data: map[string][]byte{"token": []byte(deleteToken)}}
	w.h = &handler{ctx: ctx, vms: testutil.NamedCache[*hfv1.VirtualMachine]{Objs: w.vms}, droplets: w.queue,
		secrets: oneCached[*corev1.Secret]{obj: token},
		clients: digitalocean.NewClients(do.URL(), digitalocean.LimiterOptions{Disabled: true})}
	w.h.deletes = newDeleteBatcher(w.h)
	w.r = &reaper{h: w.h}
	return w
}

// vm adds a running VM whose droplet a multi-create made (known by ID
// alone), and returns its droplet's ID.
func (w *batchWorld) vm(name string) int {
	uid := types.UID("uid-" + name)
	id := outOfBand(w.do, name, digitalocean.BatchTag("b1"))
	w.vms[name] = &hfv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: uid}}
	d := deletingDroplet(uid, id, digitalocean.BatchTag("b1"), "Created")
	d.Name, d.Spec.Name, d.Spec.VirtualMachine, d.UID = name, name, name, "droplet-"+uid
	d.Spec.TokenSecretRef = v1alpha1.SecretKeyRef{Name: "token", Key: "token"}
	w.droplets[name] = d
	return id
}

// deleteVM marks the VM deleted and has the reaper see it.
func (w *batchWorld) deleteVM(name string) {
	w.vms[name].DeletionTimestamp = &metav1.Time{Time: time.Now()}
	if retry, err := w.r.reap("ns/" + name); retry != 0 || err != nil {
		w.t.Fatalf("%s: the reaper asks to retry in %v although the batcher has it", name, retry)
	}
}

// settle waits until no VM's droplets are pending in the batcher.
func (w *batchWorld) settle() {
	w.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		w.h.deletes.mu.Lock()
		n := len(w.h.deletes.pending)
		w.h.deletes.mu.Unlock()
		if n == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	w.t.Fatal("deletes still pending after 20 s")
}

// reaped: DigitalOcean confirmed every droplet of name's deleted, so its
// cleanup sends nothing.
func (w *batchWorld) reaped(name string) bool {
	return w.h.targetsOf(w.droplets[name]).settled(&w.h.notes)
}

// live reports whether DigitalOcean still has droplet id.
func (w *batchWorld) live(id int) bool {
	return slices.ContainsFunc(w.do.Droplets(deleteToken), func(d godo.Droplet) bool { return d.ID == id })
}

// dropletRequests counts the requests for droplets and tags, by route.
func (w *batchWorld) dropletRequests() (total int, byKey map[string]int) {
	byKey = w.do.RequestCounts()
	for _, n := range byKey {
		total += n
	}
	return total, byKey
}

func TestTwentyDeletedVMsCostThreeRequests(t *testing.T) {
	w := newBatchWorld(t)
	var names []string
	for i := range 20 {
		names = append(names, fmt.Sprintf("vm-%02d", i))
		w.vm(names[i])
	}
	w.do.ResetRequests()
	for _, n := range names {
		w.deleteVM(n)
	}
	w.settle()
	if left := w.do.Droplets(deleteToken); len(left) != 0 {
		t.Fatalf("%d droplets left after the batched delete", len(left))
	}
	total, byKey := w.dropletRequests()
	want := map[string]int{fakedo.RouteCreateTag + " 201": 1, fakedo.RouteTagResources + " 204": 1, fakedo.RouteDeleteDropletsByTag + " 204": 1}
	if total != 3 || !maps.Equal(byKey, want) {
		t.Errorf("20 deleted VMs cost %d requests %v, want %v", total, byKey, want)
	}
	for _, n := range names {
		if !w.reaped(n) {
			t.Errorf("%s: not recorded as reaped, so its cleanup would delete again", n)
		}
		if !slices.Contains(w.queue.enqueued, "ns/"+n) {
			t.Errorf("%s: its Droplet was not enqueued after the delete", n)
		}
	}
}

// The batches of one event's end share a tag: every batch after the first
// costs two requests. A failed batch may leave droplets under its tag, so
// the next one takes a new tag.
func TestLaterBatchesReuseTheTagOfASuccessfulOne(t *testing.T) {
	w := newBatchWorld(t)
	var ids []int
	for i := range 6 {
		ids = append(ids, w.vm(fmt.Sprintf("vm-%d", i)))
	}
	w.do.ResetRequests()
	for wave := range 2 {
		w.deleteVM(fmt.Sprintf("vm-%d", wave))
		w.settle()
	}
	total, byKey := w.dropletRequests()
	want := map[string]int{fakedo.RouteCreateTag + " 201": 1, fakedo.RouteTagResources + " 204": 2, fakedo.RouteDeleteDropletsByTag + " 204": 2}
	if total != 5 || !maps.Equal(byKey, want) {
		t.Errorf("two batches cost %d requests %v, want %v", total, byKey, want)
	}

	w.do.SetFaults(fakedo.Faults{Rules: map[string]fakedo.FaultRule{fakedo.RouteDeleteDropletsByTag: {ErrorRate: 1, ErrorStatus: 503}}})
	w.deleteVM("vm-2")
	deadline := time.Now().Add(10 * time.Second)
	for w.do.RequestCounts()[fakedo.RouteDeleteDropletsByTag+" 503"] == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	w.do.SetFaults(fakedo.Faults{})
	w.settle()
	var tags []string
	for _, r := range w.do.TagResourcesRecords(deleteToken) {
		if !slices.Contains(tags, r.Tag) {
			tags = append(tags, r.Tag)
		}
	}
	if len(tags) != 2 || w.live(ids[2]) {
		t.Errorf("tags %v, vm-2's droplet live %v; want a new tag after the failed batch, and the droplet gone", tags, w.live(ids[2]))
	}
}

func TestDeleteBatchNeverTagsALivingVMsDroplet(t *testing.T) {
	w := newBatchWorld(t)
	gone := w.vm("gone")
	living := w.vm("living")
	handedOver := w.vm("handed-over")
	// A living VM's Droplet took handed-over's droplet (as from a pool).
	w.vms["taker"] = &hfv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "taker", UID: "uid-taker"}}
	taker := deletingDroplet("uid-taker", 0, "", "Creating")
	taker.Name, taker.UID, taker.Spec.ClaimedDropletID = "taker", "droplet-uid-taker", handedOver
	w.droplets["taker"] = taker

	w.deleteVM("gone")
	w.deleteVM("handed-over")
	// A stale hand-off: the living VM's entry reaches the batcher all the same.
	client, err := w.h.clients.ForSecret(w.h.secrets, w.droplets["living"].Namespace, w.droplets["living"].Spec.TokenSecretRef)
	if err != nil {
		t.Fatal(err)
	}
	w.h.deletes.add(client, w.droplets["living"], w.h.targetsOf(w.droplets["living"]))
	w.settle()

	if w.live(gone) || !w.live(living) || !w.live(handedOver) {
		t.Errorf("live after the batch: gone %v, living %v, handed over %v; want only the deleted VM's droplet gone",
			w.live(gone), w.live(living), w.live(handedOver))
	}
	for _, r := range w.do.TagResourcesRecords(deleteToken) {
		if slices.Contains(r.DropletIDs, living) || slices.Contains(r.DropletIDs, handedOver) {
			t.Errorf("tag %s named droplets %v, among them a living VM's", r.Tag, r.DropletIDs)
		}
	}
	if !w.reaped("gone") || w.reaped("living") || w.reaped("handed-over") {
		t.Error("reaped records differ from what was deleted")
	}
}

func TestDeleteBatchFallsBackOneByOneWhenADropletIsGone(t *testing.T) {
	w := newBatchWorld(t)
	ids := []int{w.vm("a"), w.vm("b"), w.vm("c")}
	client, err := w.h.clients.ForSecret(w.h.secrets, w.droplets["b"].Namespace, w.droplets["b"].Spec.TokenSecretRef)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Droplets.Delete(context.Background(), ids[1]); err != nil {
		t.Fatal(err)
	}
	w.do.ResetRequests()
	for _, n := range []string{"a", "b", "c"} {
		w.deleteVM(n)
	}
	w.settle()
	if left := w.do.Droplets(deleteToken); len(left) != 0 {
		t.Fatalf("left after the fallback: %v", left)
	}
	for _, n := range []string{"a", "b", "c"} {
		if !w.reaped(n) {
			t.Errorf("%s not reaped (a 404 counts as gone)", n)
		}
	}
	if got := w.do.RequestCounts()[fakedo.RouteDeleteDroplet+" 204"]; got != 2 {
		t.Errorf("%d deletes by ID answered 204, want the 2 left", got)
	}
}

func TestDeleteBatchRetriesFailuresAndLosesNothing(t *testing.T) {
	w := newBatchWorld(t)
	a, b := w.vm("a"), w.vm("b")
	w.do.SetFaults(fakedo.Faults{Rules: map[string]fakedo.FaultRule{fakedo.RouteDeleteDropletsByTag: {ErrorRate: 1, ErrorStatus: 503}}})
	w.deleteVM("a")
	deadline := time.Now().Add(10 * time.Second)
	for w.do.RequestCounts()[fakedo.RouteDeleteDropletsByTag+" 503"] == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !w.h.deletes.isPending(w.droplets["a"]) {
		t.Fatal("a failed entry left the batcher at the first 503")
	}
	w.deleteVM("b") // joins the retry
	w.do.SetFaults(fakedo.Faults{})
	w.settle()
	if w.live(a) || w.live(b) || !w.reaped("a") || !w.reaped("b") {
		t.Errorf("after the retry: a live %v reaped %v, b live %v reaped %v", w.live(a), w.reaped("a"), w.live(b), w.reaped("b"))
	}

	// Refused for good: handed back to the Droplet's cleanup at once.
	c := w.vm("c")
	w.do.SetFaults(fakedo.Faults{Rules: map[string]fakedo.FaultRule{fakedo.RouteTagResources: {ErrorRate: 1, ErrorStatus: 401}}})
	w.deleteVM("c")
	w.settle()
	if !w.live(c) || w.reaped("c") || !slices.Contains(w.queue.enqueued, "ns/c") {
		t.Errorf("refused batch: live %v, reaped %v, enqueued %v; want it left to its cleanup", w.live(c), w.reaped("c"), w.queue.enqueued)
	}
}

// A create whose answer is not in is looked up by name, in its cleanup.
func TestDeleteBatchTakesOnlyDropletsKnownByID(t *testing.T) {
	if (deleteTargets{unanswered: &v1alpha1.Droplet{}, ids: []int{1}}).batchable() {
		t.Error("targets with a lookup by name are batchable")
	}
	if !(deleteTargets{ids: []int{1}}).batchable() || (deleteTargets{}).batchable() {
		t.Error("batchable wrong for ID-only or empty targets")
	}
}

// TestOneByOneKeepsTheFailureWhenTheLastSucceeds: after a batch's 404,
// entries whose own delete failed go back with that failure, also when an
// entry sent after them succeeded (classifying no error crashed the
// process).
func TestOneByOneKeepsTheFailureWhenTheLastSucceeds(t *testing.T) {
	a, b, c := &deleteEntry{}, &deleteEntry{}, &deleteEntry{}
	unavailable := errors.New("503")
	var deleted []*deleteEntry
	failed, failure := oneByOne([]*deleteEntry{a, b, c}, func(e *deleteEntry) error {
		if e == a {
			return unavailable
		}
		return nil
	}, func(e *deleteEntry) { deleted = append(deleted, e) })
	if len(failed) != 1 || failed[0] != a || !errors.Is(failure, unavailable) {
		t.Errorf("failed %v with %v, want a with its error", failed, failure)
	}
	if len(deleted) != 2 || deleted[0] != b || deleted[1] != c {
		t.Errorf("deleted %v, want b and c", deleted)
	}
}
