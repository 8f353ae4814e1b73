// Package finalizer names the finalizer wrangler's remove handler keeps on
// the objects it cleans up: "wrangler.cattle.io/" and the handler's name.
// That is why handler names are API: renaming one strands its finalizer
// on every object that has it, and those objects are never deleted.
package finalizer

import (
	"context"
	"slices"
	"strings"

	"github.com/rancher/wrangler/v3/pkg/generic"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Of is the finalizer of wrangler's remove handler named handler (wrangler
// builds it the same way and does not export it).
func Of(handler string) string { return "wrangler.cattle.io/" + handler }

// Has reports that obj carries the finalizer of the remove handler named
// handler.
func Has(obj metav1.Object, handler string) bool {
	return slices.Contains(obj.GetFinalizers(), Of(handler))
}

// HandlerPrefix starts the name of every handler of this provisioner.
const HandlerPrefix = "hf-provisioner-digitalocean"

// The remove handlers of our controllers, whose finalizers their objects
// carry: one controller makes objects another cleans up (the VM controller
// makes Droplets and Keys with their finalizers on), so the names live here.
// Never rename them.
const (
	VMCleanupHandler      = HandlerPrefix + "-vm-cleanup"
	DropletCleanupHandler = HandlerPrefix + "-droplet-cleanup"
	KeyCleanupHandler     = HandlerPrefix + "-key-cleanup"
)

// Ours reports a finalizer that one of this provisioner's remove handlers
// keeps (and no one else's, Gargantua's finalizer.hobbyfarm.io/vmset least
// of all): what an uninstall releases once nothing is left to clean up.
func Ours(f string) bool { return strings.HasPrefix(f, Of(HandlerPrefix)) }

// Keep ends a remove handler's pass without releasing its finalizer: what
// the pass returned, with wrangler's ErrSkip unless it failed.
func Keep[T any](obj T, err error) (T, error) {
	if err != nil {
		return obj, err
	}
	return obj, generic.ErrSkip
}

// Registrar is what RegisterCleanup needs of a generated controller.
type Registrar interface {
	AddGenericHandler(ctx context.Context, name string, handler generic.Handler)
	Updater() generic.Updater
}

// RegisterCleanup registers cleanup as wrangler's OnRemove does (the same
// handler name, so the same finalizer), except that an object foreign
// picks out (someone else's, which the handler must not hold up) is never
// given the finalizer. One that has it already is handled as usual.
func RegisterCleanup[T generic.RuntimeMetaObject](ctx context.Context, c Registrar, name string, cleanup generic.ObjectHandler[T], foreign func(T) bool) {
	remove := generic.NewRemoveHandler(name, c.Updater(), generic.FromObjectHandlerToHandler(cleanup))
	c.AddGenericHandler(ctx, name, func(key string, obj runtime.Object) (runtime.Object, error) {
		if t, ok := obj.(T); ok && foreign(t) {
			if !Has(t, name) {
				return obj, nil
			}
		}
		return remove(key, obj)
	})
}
