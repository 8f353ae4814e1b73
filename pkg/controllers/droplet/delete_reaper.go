package droplet

import (
	"context"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/keyqueue"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

const (
	reaperWorkers = 2
	// reaperAttempts bounds the retries of one VM's early delete; the
	// Droplet's cleanup deletes in any case.
	reaperAttempts = 5
)

// reaper deletes a deleted VM's droplet in DigitalOcean as soon as the VM's
// deletion is seen. The Droplet's own cleanup runs only after the VM's
// cleanup has deleted the Droplet, and both wait their turn in queues that
// a flood of new VMs fills (first in, first out); this queue only ever holds
// deletions. The cleanup still owns the finalizers: it finds the same
// targets deleted and sends nothing again, or deletes what appeared since.
type reaper struct {
	h     *handler
	queue *keyqueue.Queue
}

func startReaper(ctx context.Context, h *handler, vms, droplets, secrets cache.SharedIndexInformer) {
	r := &reaper{h: h}
	r.queue = keyqueue.Start(ctx, keyqueue.Options{Name: "droplet-reaper", Workers: reaperWorkers, MaxRetries: reaperAttempts,
		Backoff: workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, time.Minute)},
		r.reap, vms.HasSynced, droplets.HasSynced, secrets.HasSynced)
	_, _ = vms.AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: beingDeleted,
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    r.enqueue,
			UpdateFunc: func(_, obj any) { r.enqueue(obj) },
		},
	})
}

func beingDeleted(obj any) bool {
	m, err := meta.Accessor(obj)
	return err == nil && m.GetDeletionTimestamp() != nil
}

func (r *reaper) enqueue(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		r.queue.Add(key)
	}
}

// reap deletes the droplets of the deleted VM key. A failed delete is
// retried after DigitalOcean's delay, a few times: the Droplet's cleanup
// deletes in any case.
func (r *reaper) reap(key string) (time.Duration, error) {
	h := r.h
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, nil
	}
	vm, err := h.vms.Get(namespace, name)
	if err != nil || vm.DeletionTimestamp == nil || v1alpha1.ForceReleaseRequested(vm) {
		return 0, nil
	}
	d, err := h.droplets.Cache().Get(namespace, name)
	if err != nil || !reapable(vm, d) {
		return 0, nil
	}
	if h.notes.inBatch(d) || h.deletes.isPending(d) {
		return 0, nil
	}
	targets := h.targetsOf(d)
	if targets.settled(&h.notes) {
		return 0, nil // a VM update after the delete: nothing more to send or log
	}
	client, err := h.clients.ForSecret(h.secrets, d.Namespace, d.Spec.TokenSecretRef)
	if err != nil {
		return 0, nil // the cleanup records why
	}
	if h.deletes != nil && targets.batchable() {
		h.deletes.add(client, d, targets) // it records them as reaped once deleted
		return 0, nil
	}
	ctx, cancel := digitalocean.CallContext(h.ctx)
	defer cancel()
	log := logrus.WithField("vm", vm.Name)
	if err := h.deleteEach(ctx, client, targets); err != nil {
		f := digitalocean.Classify(err)
		log.WithField("reason", f.Reason).Info("early droplet delete failed; retrying: " + f.Message)
		return f.RetryAfter, err
	}
	log.WithField("droplet", d.Status.DropletID).Info("VM deleted; droplet deleted in DigitalOcean")
	return 0, nil
}

// reapable: d is vm's, was created (its answer is on record, so no create
// of it is in flight) and is not to be released by force.
func reapable(vm *hfv1.VirtualMachine, d *v1alpha1.Droplet) bool {
	return d.Spec.Name != "" && vmUID(d) == string(vm.UID) && d.Status.DropletID != 0 &&
		v1alpha1.Created.IsTrue(d) && !v1alpha1.ForceReleaseRequested(d)
}
