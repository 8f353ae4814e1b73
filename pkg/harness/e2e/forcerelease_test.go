package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/finalizer"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/rancher/wrangler/v3/pkg/condition"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A revoked token blocks deletion, visibly; the force-release annotation
// lets the objects go without DigitalOcean, each saying what it leaves there.
func TestForceReleaseLetsAStuckDeletionGo(t *testing.T) {
	w := newWorld(t, worldOptions{})
	env := w.standardEnv("do-env")
	// Each VM's key stays registered (DigitalOcean fails its retirement),
	// so that the Key too has something to delete.
	w.do.SetFaults(fakedo.Faults{Rules: map[string]fakedo.FaultRule{fakedo.RouteDeleteKey: {ErrorRate: 1, ErrorStatus: http.StatusServiceUnavailable}}})
	// "whole" is released through its VM; "parts" one object at a time.
	names := []string{"whole", "parts"}
	for _, n := range names {
		w.createVM(n, env, "ubuntu")
	}
	w.waitRunning(names...)
	dropletID, keyID := map[string]int{}, map[string]int{}
	for _, n := range names {
		dropletID[n] = w.droplet(n).Status.DropletID
		k, err := w.keys.Get(w.ns, n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		keyID[n] = k.Status.KeyID
	}

	// The token is revoked: DigitalOcean answers every call with 401.
	w.do.SetFaults(fakedo.Faults{Rules: map[string]fakedo.FaultRule{fakedo.AnyRoute: {ErrorRate: 1, ErrorStatus: http.StatusUnauthorized}}})
	for _, n := range names {
		if err := w.hf.VMs.Delete(w.ns, n, nil); err != nil {
			t.Fatal(err)
		}
	}

	// Without the annotation, the deletion waits and says why (each Key
	// waits for its Droplet: droplets are deleted first).
	w.eventually(60*time.Second, "deletions blocked with Deleting=False/Unauthorized", func() string {
		for _, n := range names {
			if msg := w.blockedUnauthorized("Droplet", n); msg != "" {
				return msg
			}
		}
		return ""
	})
	w.consistently(3*time.Second, "nothing released without the annotation", func() string {
		for _, n := range names {
			if msg := w.present(n, true, true, true); msg != "" {
				return msg
			}
		}
		return ""
	})

	// On the VM: the VM, its Droplet and its Key go.
	w.annotateForceRelease(func(p []byte) error { _, err := w.hf.VMs.Patch(w.ns, "whole", types.MergePatchType, p); return err })
	w.eventually(60*time.Second, "whole released", func() string { return w.present("whole", false, false, false) })
	w.eventually(10*time.Second, "ForceReleased Events for whole", func() string {
		for _, want := range []struct{ kind, text string }{
			{"VirtualMachine", fmt.Sprintf("droplet %d and SSH key %d may still exist", dropletID["whole"], keyID["whole"])},
			{"VirtualMachine", fmt.Sprintf("droplet %d may still exist and bill", dropletID["whole"])},
			{"Droplet", fmt.Sprintf("droplet %d may still exist and bill", dropletID["whole"])},
			{"Key", fmt.Sprintf("SSH key %d (", keyID["whole"])},
		} {
			if events := w.events(want.kind, "whole"); !hasEvent(events, "Warning ForceReleased: ") || !hasEvent(events, want.text) {
				return fmt.Sprintf("%s events %q lack a ForceReleased warning with %q", want.kind, events, want.text)
			}
		}
		return ""
	})

	// On the Droplet alone: the Droplet goes, and so the VM (its Key
	// deletes its key on its own); the Key waits, and says why.
	w.annotateForceRelease(func(p []byte) error { _, err := w.droplets.Patch(w.ns, "parts", types.MergePatchType, p); return err })
	w.eventually(60*time.Second, "the Droplet and VM of parts released", func() string { return w.present("parts", false, false, true) })
	w.eventually(60*time.Second, "the Key of parts blocked with Deleting=False/Unauthorized", func() string {
		return w.blockedUnauthorized("Key", "parts")
	})
	w.consistently(3*time.Second, "the Key of parts kept", func() string { return w.present("parts", false, false, true) })
	if events := w.vmEvents("parts"); !hasEvent(events, fmt.Sprintf("droplet %d may still exist and bill", dropletID["parts"])) {
		t.Errorf("VM events %q do not name droplet %d", events, dropletID["parts"])
	}
	w.annotateForceRelease(func(p []byte) error { _, err := w.keys.Patch(w.ns, "parts", types.MergePatchType, p); return err })
	w.eventually(60*time.Second, "parts released", func() string { return w.present("parts", false, false, false) })

	// Nothing was deleted in DigitalOcean: it could not be, and the Events say so.
	var left []int
	for _, d := range w.do.Droplets(testToken) {
		left = append(left, d.ID)
	}
	for _, n := range names {
		if !slices.Contains(left, dropletID[n]) {
			t.Errorf("droplet %d of %s is gone from DigitalOcean although the token was revoked", dropletID[n], n)
		}
	}
}

// expectCondition is "" when obj has cond False with reason and a message containing text.
func expectCondition(obj interface{}, cond condition.Cond, reason, text string) string {
	if !cond.IsFalse(obj) || cond.GetReason(obj) != reason || !strings.Contains(cond.GetMessage(obj), text) {
		return fmt.Sprintf("%s=%q reason %q message %q, want False/%s with %q", cond, cond.GetStatus(obj), cond.GetReason(obj), cond.GetMessage(obj), reason, text)
	}
	return ""
}

// present is "" when the VM (with our finalizer), its Droplet and its Key exist as wanted.
func (w *world) present(name string, vm, droplet, key bool) string {
	w.t.Helper()
	got, err := w.hf.VMs.Get(w.ns, name, metav1.GetOptions{})
	switch {
	case err != nil && !apierrors.IsNotFound(err):
		w.t.Fatal(err)
	case vm != (err == nil):
		return fmt.Sprintf("VM %s exists: %v, want %v", name, err == nil, vm)
	case vm && !finalizer.Has(got, finalizer.VMCleanupHandler):
		return fmt.Sprintf("VM %s lost our finalizer: %v", name, got.Finalizers)
	}
	_, err = w.droplets.Get(w.ns, name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		w.t.Fatal(err)
	}
	if droplet != (err == nil) {
		return fmt.Sprintf("Droplet %s exists: %v, want %v", name, err == nil, droplet)
	}
	_, err = w.keys.Get(w.ns, name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		w.t.Fatal(err)
	}
	if key != (err == nil) {
		return fmt.Sprintf("Key %s exists: %v, want %v", name, err == nil, key)
	}
	return ""
}

// annotateForceRelease merge-patches the force-release annotation on with patch.
func (w *world) annotateForceRelease(patch func([]byte) error) {
	w.t.Helper()
	p, err := json.Marshal(map[string]interface{}{"metadata": map[string]interface{}{
		"annotations": map[string]string{v1alpha1.ForceReleaseAnnotation: "true"}}})
	if err != nil {
		w.t.Fatal(err)
	}
	if err := patch(p); err != nil {
		w.t.Fatal(err)
	}
}

// consistently fails the test as soon as cond returns a complaint within d.
func (w *world) consistently(d time.Duration, what string, cond func() string) {
	w.t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if msg := cond(); msg != "" {
			w.t.Fatalf("%s: %s", what, msg)
		}
	}
}

// blockedUnauthorized says how the Droplet or Key (kind) name is not yet
// blocked with Deleting=False/Unauthorized.
func (w *world) blockedUnauthorized(kind, name string) string {
	var obj interface{}
	var err error
	if kind == "Droplet" {
		obj, err = w.droplets.Get(w.ns, name, metav1.GetOptions{})
	} else {
		obj, err = w.keys.Get(w.ns, name, metav1.GetOptions{})
	}
	if err != nil {
		return err.Error()
	}
	if msg := expectCondition(obj, v1alpha1.Deleting, "Unauthorized", "DigitalOcean rejected the API token"); msg != "" {
		return kind + " " + name + ": " + msg
	}
	return ""
}
