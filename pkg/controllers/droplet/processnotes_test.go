package droplet

import (
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func TestForgetClearsAllButTheClaimAndConfirmedDeletes(t *testing.T) {
	var m processNotes
	d := &v1alpha1.Droplet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm-1", UID: "droplet-uid", Generation: 1}}
	d.Spec.Tags = []string{digitalocean.VMTag("vm-uid")}
	d.Status.DropletID = 42

	m.noteCreated(d, 42)
	m.firstReady(d)
	m.noteRefused(d)
	m.noteRecorded(d)
	m.claim(d, "batch")
	m.noteGone(42)

	m.discard(d)
	if _, ok := m.createdID(d); ok {
		t.Error("the created droplet ID outlived forget")
	}
	if _, ok := m.readySince.Load(cache.MetaObjectToName(d).String()); ok {
		t.Error("the first-ready time outlived forget")
	}
	if _, ok := m.refusedAt(d); ok {
		t.Error("the refusal outlived forget")
	}
	if m.isRecorded(d) {
		t.Error("the recorded mark outlived forget")
	}
	// Its sender releases the claim once the multi-create answered.
	if !m.inBatch(d) {
		t.Error("forget released a multi-create's claim while it is sending")
	}
	// Kept whatever becomes of the Droplet, so no other path deletes it again.
	if !m.isGone(42) {
		t.Error("forget dropped a delete DigitalOcean confirmed")
	}
}

func TestConfirmedDeletesAreDroppedAfterGoneMemory(t *testing.T) {
	var m processNotes
	m.gone.Store(1, time.Now().Add(-goneMemory-time.Minute))
	m.gone.Store(2, time.Now().Add(-goneMemory/2))
	m.noteGone(3)
	if m.isGone(1) || !m.isGone(2) || !m.isGone(3) {
		t.Errorf("gone 1 %v, 2 %v, 3 %v; want only the entry older than %v dropped", m.isGone(1), m.isGone(2), m.isGone(3), goneMemory)
	}
}

func TestRefusalHoldsOnlyItsGeneration(t *testing.T) {
	var m processNotes
	d := &v1alpha1.Droplet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm-1", Generation: 1}}
	m.noteRefused(d)
	if _, ok := m.refusedAt(d); !ok {
		t.Fatal("the refusal of the current spec is not remembered")
	}
	d.Generation = 2
	if _, ok := m.refusedAt(d); ok {
		t.Error("a changed spec is still held back by the old spec's refusal")
	}
}
