// Package events records Kubernetes Events and keeps conditions, emitting an
// Event only when a condition actually changes.
package events

import (
	"context"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/rancher/wrangler/v3/pkg/condition"
	"github.com/rancher/wrangler/v3/pkg/genericcondition"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// Component is the Events' source.
const Component = "hf-provisioner-digitalocean"

// NewRecorder returns a recorder that writes Events into namespace until ctx ends.
func NewRecorder(ctx context.Context, client kubernetes.Interface, namespace string) record.EventRecorder {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, hfv1.AddToScheme, v1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			logrus.Fatalf("building event scheme: %v", err)
		}
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events(namespace)})
	go func() {
		<-ctx.Done()
		broadcaster.Shutdown()
	}()
	return broadcaster.NewRecorder(scheme, corev1.EventSource{Component: Component})
}

// SetCondition sets cond on obj (the object, not its status: wrangler finds
// .Status.Conditions itself) and reports whether status, reason or message changed.
func SetCondition(status interface{}, cond condition.Cond, ok bool, reason, message string) bool {
	want := "False"
	if ok {
		want = "True"
	}
	if cond.GetStatus(status) == want && cond.GetReason(status) == reason && cond.GetMessage(status) == message {
		return false
	}
	now := time.Now().UTC().Format(time.RFC3339)
	if cond.GetStatus(status) != want {
		setLastTransition(status, cond, now)
	}
	cond.LastUpdated(status, now)
	cond.SetStatus(status, want)
	cond.Reason(status, reason)
	cond.Message(status, message)
	return true
}

// MarkConfigValid records Configured=True on a Droplet that has no verdict
// yet, without an Event; it reports whether d changed. The Droplet
// controller calls it in its first status write: the VirtualMachine
// controller makes a Droplet with a spec only from a valid config, and
// leaves a config valid from the start for that write to record.
func MarkConfigValid(d *v1alpha1.Droplet) bool {
	if v1alpha1.Configured.GetStatus(d) != "" {
		return false
	}
	return SetCondition(d, v1alpha1.Configured, true, v1alpha1.ReasonConfigValid, v1alpha1.MessageConfigValid)
}

// Transition sets cond on obj and, when it changed, records one Event on each object
// (nil objects are skipped): Normal when ok, Warning otherwise.
func Transition(rec record.EventRecorder, status interface{}, cond condition.Cond, ok bool, reason, message string, objs ...runtime.Object) bool {
	if !SetCondition(status, cond, ok, reason, message) {
		return false
	}
	eventType := corev1.EventTypeNormal
	if !ok {
		eventType = corev1.EventTypeWarning
	}
	Record(rec, eventType, reason, message, objs...)
	return true
}

// Record records one Event on each object, skipping nil ones. It is for
// one-off actions that are transitions themselves, such as a finalizer
// released by force; a condition's changes go through Transition.
func Record(rec record.EventRecorder, eventType, reason, message string, objs ...runtime.Object) {
	for _, obj := range objs {
		if obj != nil && !isNil(obj) {
			rec.Event(obj, eventType, reason, message)
		}
	}
}

func isNil(obj runtime.Object) bool {
	switch o := obj.(type) {
	case *hfv1.VirtualMachine:
		return o == nil
	case *v1alpha1.Droplet:
		return o == nil
	case *v1alpha1.Key:
		return o == nil
	}
	return false
}

// conditions returns the conditions of a Droplet or Key.
func conditions(obj interface{}) *[]genericcondition.GenericCondition {
	switch o := obj.(type) {
	case *v1alpha1.Droplet:
		return &o.Status.Conditions
	case *v1alpha1.Key:
		return &o.Status.Conditions
	}
	return nil
}

// setLastTransition stamps when cond changes status; wrangler's condition
// package keeps only the last update, which a new message also moves.
func setLastTransition(obj interface{}, cond condition.Cond, ts string) {
	cond.CreateUnknownIfNotExists(obj)
	if list := conditions(obj); list != nil {
		for i := range *list {
			if (*list)[i].Type == string(cond) {
				(*list)[i].LastTransitionTime = ts
			}
		}
	}
}

// LastTransition is when cond last changed status, "" if not recorded.
func LastTransition(obj interface{}, cond condition.Cond) string {
	if list := conditions(obj); list != nil {
		for _, c := range *list {
			if c.Type == string(cond) {
				return c.LastTransitionTime
			}
		}
	}
	return ""
}
