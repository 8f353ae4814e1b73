// Package pass is what a handler pass over one of this controller's own
// objects (a Droplet, a Key) needs around its decisions: condition changes
// whose Events wait for the status write that records them, DigitalOcean
// failures told where they came from and retried with backoff, the status
// write itself and the next look, and forgetting an object that is going.
// Each kind says what differs (Kind); the rest is written once, here.
package pass

import (
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	"github.com/rancher/wrangler/v3/pkg/condition"
	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

// Object is a kind whose status this controller writes.
type Object interface {
	metav1.Object
	runtime.Object
}

// Kind is what differs between the kinds a Kit serves.
type Kind[T Object] interface {
	// Status is obj's status, compared to tell whether a pass changed it.
	Status(obj T) any
	// Stamp derives the status fields every write carries (the STATE and
	// MESSAGE columns), before the comparison.
	Stamp(obj T)
	// BeforeWrite completes a changed status just before its write.
	BeforeWrite(obj T)
	// UpdateStatus writes obj's status.
	UpdateStatus(obj T) (T, error)
	// Written learns of a status write that went through.
	Written(obj T)
	// EnqueueAfter looks at obj again after the delay.
	EnqueueAfter(obj T, after time.Duration)
	// Log is the logger naming obj's VM (or pool).
	Log(obj T) *logrus.Entry
	// AlsoTold are the objects besides obj that get the Event of a
	// condition change (ok: a step forward, else a problem); nil ones are
	// skipped.
	AlsoTold(obj T, ok bool) []runtime.Object
	// Origin says where obj's settings came from, for refusals.
	Origin(obj T) digitalocean.Origin
	// Setting is the value of config key as obj sent it ("" when it sends
	// none).
	Setting(obj T, key string) string
	// Forget drops what the handler remembers of obj beyond the Kit.
	Forget(obj T)
}

// Kit is the plumbing of one handler's passes over kind T. It is safe for
// the handler's workers at once.
type Kit[T Object] struct {
	// Name is the kind's name, the reconcile-error metric's label.
	Name string
	Kind Kind[T]
	// Held holds each pass's Events until its status write (Finish).
	Held *events.Held
	// Retries spaces out each object's retries after transient failures.
	Retries *digitalocean.Backoff
}

// New is the Kit of kind, its Events recorded by rec (nil: none).
func New[T Object](name string, kind Kind[T], rec record.EventRecorder) *Kit[T] {
	return &Kit[T]{Name: name, Kind: kind, Held: events.NewHeld(rec), Retries: digitalocean.NewBackoff()}
}

func keyOf(obj metav1.Object) string { return cache.MetaObjectToName(obj).String() }

// Finish writes a changed status, then records the pass's Events and
// schedules the next look (requeue; 0: none). On a failed write it returns
// orig and the error: the next pass finds the same transitions and records
// them, Events and all.
func (k *Kit[T]) Finish(orig, obj T, requeue time.Duration) (T, error) {
	k.Kind.Stamp(obj)
	held := k.Held.Take(obj)
	if !equality.Semantic.DeepEqual(k.Kind.Status(orig), k.Kind.Status(obj)) {
		k.Kind.BeforeWrite(obj)
		updated, err := k.Kind.UpdateStatus(obj)
		if err != nil {
			return orig, err
		}
		obj = updated
		k.Kind.Written(obj)
	}
	held.Flush()
	if requeue > 0 {
		k.Kind.EnqueueAfter(obj, requeue)
	}
	return obj, nil
}

// Transition records a condition change as an Event on obj and on those
// the kind also tells; the Events wait for Finish's write.
func (k *Kit[T]) Transition(obj T, cond condition.Cond, ok bool, reason, message string) {
	k.Held.Transition(obj, cond, ok, reason, message, k.Kind.AlsoTold(obj, ok)...)
}

// FailDO records a DigitalOcean error on cond and says when to look again.
func (k *Kit[T]) FailDO(obj T, cond condition.Cond, err error) time.Duration {
	f := digitalocean.Classify(err)
	return k.RecordFailure(obj, cond, f, f.Reason, f.Message)
}

// RecordFailure records f on cond under reason and message (one condition
// change, so one Event) and says when to look again. A refusal, which
// nothing changes until someone fixes it, says what was refused, where it
// came from and how to fix it.
func (k *Kit[T]) RecordFailure(obj T, cond condition.Cond, f digitalocean.Failure, reason, message string) time.Duration {
	if f.Permanent {
		message = f.Describe(k.Kind.Origin(obj), func(key string) string { return k.Kind.Setting(obj, key) })
	}
	k.report(obj, cond, f.Reason, reason, message)
	return k.Retries.Delay(keyOf(obj), f)
}

// Fail records a problem outside DigitalOcean on cond; the watch on its
// cause looks again.
func (k *Kit[T]) Fail(obj T, cond condition.Cond, reason, message string) {
	k.report(obj, cond, reason, reason, message)
}

// report counts a failure under metricReason (DigitalOcean's class of it,
// whatever the condition says) and records it on cond.
func (k *Kit[T]) report(obj T, cond condition.Cond, metricReason, reason, message string) {
	metrics.ReconcileErrors.WithLabelValues(k.Name, metricReason).Inc()
	k.Kind.Log(obj).WithField("reason", reason).Warn(message)
	k.Transition(obj, cond, false, reason, message)
}

// Retry is when to look at obj again after f.
func (k *Kit[T]) Retry(obj T, f digitalocean.Failure) time.Duration {
	return k.Retries.Delay(keyOf(obj), f)
}

// Succeeded resets obj's backoff: its next failure retries soon again.
func (k *Kit[T]) Succeeded(obj T) { k.Retries.Reset(keyOf(obj)) }

// Forget drops what this process remembers of obj, which is going.
func (k *Kit[T]) Forget(obj T) {
	k.Held.Drop(obj)
	k.Retries.Reset(keyOf(obj))
	k.Kind.Forget(obj)
}
