package alphatest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// After Orphan the VM and its Secret are gone; the Key and Droplet are
// deleting, held by the alpha's finalizers, with their records; the
// droplet and key are still at DigitalOcean.
func TestOrphanLeavesDeletingObjectsAndLiveDroplet(t *testing.T) {
	w := newWorld(t, sharedEnv(t), newFake(t))
	p := w.provision("vm-1", VMOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := Orphan(ctx, w.writer, p); err != nil {
		t.Fatal(err)
	}

	for _, gone := range []struct {
		gvr  schema.GroupVersionResource
		name string
	}{{vmsResource, p.VM}, {secretsResource, p.SecretName}} {
		if _, err := w.dyn.Resource(gone.gvr).Namespace(w.ns).Get(ctx, gone.name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s %s: %v, want gone", gone.gvr.Resource, gone.name, err)
		}
	}
	key, droplet := w.get(keysResource, p.KeyName), w.get(dropletsResource, p.DropletName)
	for _, o := range []struct {
		name       string
		deleting   bool
		finalizers []string
		finalizer  string
		id, want   int64
	}{
		{p.KeyName, key.GetDeletionTimestamp() != nil, key.GetFinalizers(), alpha.KeyFinalizer,
			num(key, "status", "key", "id"), int64(p.KeyID)},
		{p.DropletName, droplet.GetDeletionTimestamp() != nil, droplet.GetFinalizers(), alpha.DropletFinalizer,
			num(droplet, "status", "droplet", "id"), int64(p.DropletID)},
	} {
		if !o.deleting || o.id != o.want || !slices.Equal(o.finalizers, []string{o.finalizer}) {
			t.Errorf("%s: deleting %v, finalizers %v, recorded id %d (want %d)", o.name, o.deleting, o.finalizers, o.id, o.want)
		}
	}
	if details, ok := w.do.Details(testToken, p.DropletID); !ok || !slices.Equal(details.SSHKeyIDs, []int{p.KeyID}) {
		t.Errorf("droplet %d at DigitalOcean: %v %+v", p.DropletID, ok, details)
	}
	if keys := w.keysNamed(p.KeyName); len(keys) != 1 {
		t.Errorf("keys named %s: %v", p.KeyName, keys)
	}
}
