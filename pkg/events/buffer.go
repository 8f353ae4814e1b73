package events

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

// Buffer is an EventRecorder that holds a pass's Events until the status
// write recording their conditions has succeeded. A write that fails (a
// conflict) is redone by the next pass, which finds the same transitions
// and records them again: sent at once, each would be recorded twice.
type Buffer struct {
	rec     record.EventRecorder
	mu      sync.Mutex
	pending []func()
}

// NewBuffer holds Events for rec.
func NewBuffer(rec record.EventRecorder) *Buffer { return &Buffer{rec: rec} }

func (b *Buffer) hold(f func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending = append(b.pending, f)
}

func (b *Buffer) Event(obj runtime.Object, eventtype, reason, message string) {
	b.hold(func() { b.rec.Event(obj, eventtype, reason, message) })
}

func (b *Buffer) Eventf(obj runtime.Object, eventtype, reason, messageFmt string, args ...interface{}) {
	b.Event(obj, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

func (b *Buffer) AnnotatedEventf(obj runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...interface{}) {
	message := fmt.Sprintf(messageFmt, args...)
	b.hold(func() { b.rec.AnnotatedEventf(obj, annotations, eventtype, reason, "%s", message) })
}

// Flush records the held Events, once the write succeeded.
func (b *Buffer) Flush() {
	b.mu.Lock()
	pending := b.pending
	b.pending = nil
	b.mu.Unlock()
	for _, f := range pending {
		f()
	}
}
