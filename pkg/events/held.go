package events

import (
	"sync"

	"github.com/rancher/wrangler/v3/pkg/condition"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

// Held keeps, per object (by UID), the Buffer of the handler pass under
// way, until the status write that records its conditions. It is safe for
// a handler's workers at once. A nil Held holds nothing, for tests of
// handlers that record no Event.
type Held struct {
	rec     record.EventRecorder
	buffers sync.Map
}

// NewHeld holds Events for rec.
func NewHeld(rec record.EventRecorder) *Held { return &Held{rec: rec} }

// For is obj's Buffer, a new one if none is held yet.
func (h *Held) For(obj metav1.Object) *Buffer {
	if h == nil {
		return NewBuffer(nil)
	}
	b, _ := h.buffers.LoadOrStore(obj.GetUID(), NewBuffer(h.rec))
	return b.(*Buffer)
}

// Holds reports that Events are held for obj.
func (h *Held) Holds(obj metav1.Object) bool {
	if h == nil {
		return false
	}
	_, ok := h.buffers.Load(obj.GetUID())
	return ok
}

// Take removes obj's Buffer and returns it, an empty one if none is held:
// flush it once the status write went through.
func (h *Held) Take(obj metav1.Object) *Buffer {
	if h == nil {
		return NewBuffer(nil)
	}
	if b, ok := h.buffers.LoadAndDelete(obj.GetUID()); ok {
		return b.(*Buffer)
	}
	return NewBuffer(h.rec)
}

// Drop discards what is held for obj, which is going.
func (h *Held) Drop(obj metav1.Object) {
	if h != nil {
		h.buffers.Delete(obj.GetUID())
	}
}

// Transition is Transition with obj's Event (and one on each of also) held
// until obj's status write.
func (h *Held) Transition(obj interface {
	metav1.Object
	runtime.Object
}, cond condition.Cond, ok bool, reason, message string, also ...runtime.Object) bool {
	return Transition(h.For(obj), obj, cond, ok, reason, message, append([]runtime.Object{obj}, also...)...)
}
