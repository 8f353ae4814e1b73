// Package takeover lets go of what the original alpha provisioner left in
// a namespace, once nothing of it can be lost. The VM controller adopts a
// live VM's alpha droplet and key into Droplet and Key objects of ours
// (spec.adoptedDropletID, spec.adoptedKeyID), which delete them by ID when
// the VM goes; the alpha's own Droplet and Key objects stay, untouched,
// until then. This package:
//   - removes the alpha's finalizer from an alpha Droplet or Key being
//     deleted once an object of ours records its ID, or, when none does
//     (its VM went while no provisioner ran), once its droplet or key is
//     deleted in DigitalOcean by that ID;
//   - deletes the alpha objects whose VM is gone, so the above runs;
//   - deletes the duplicate DigitalOcean keys the alpha made for a live VM
//     of this namespace (keys.go).
//
// Nothing is found by name alone: two namespaces on one token may both have
// a VM of the same name, and the alpha tagged nothing.
package takeover

import (
	"context"
	"errors"
	"sync"

	"github.com/digitalocean/godo"
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/sweeper"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	hfcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io/v1"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	corecontrollers "github.com/rancher/wrangler/v3/pkg/generated/controllers/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
)

var errNoToken = errors.New("no DigitalOcean token of this installation can be read (from its Environments or Droplets): the original provisioner's droplet or key cannot be deleted until one can")

// Handler names are API, as every handler name of this provisioner.
const (
	DropletHandlerName = "hf-provisioner-digitalocean-alpha-droplet"
	KeyHandlerName     = "hf-provisioner-digitalocean-alpha-key"
)

type handler struct {
	ctx       context.Context
	namespace string
	clients   *digitalocean.Clients
	droplets  provcontrollers.DropletController
	keys      provcontrollers.KeyController
	vms       hfcontrollers.VirtualMachineController
	envs      hfcontrollers.EnvironmentCache
	secrets   corecontrollers.SecretCache
	recorder  record.EventRecorder
	// duplicatesDone holds the UIDs of alpha Keys whose duplicates were
	// looked for (and deleted) by this process.
	duplicatesDone sync.Map
	lists          *keyLists
}

// Register wires the takeover handlers.
func Register(ctx context.Context, namespace string, c *controllers.Set) {
	h := &handler{ctx: ctx, namespace: namespace, clients: c.DigitalOcean, droplets: c.Droplets, keys: c.Keys, vms: c.VMs,
		envs: c.Environments.Cache(), secrets: c.Secrets.Cache(), recorder: c.Recorder, lists: newKeyLists()}
	c.Droplets.OnChange(ctx, DropletHandlerName, h.onDroplet)
	c.Keys.OnChange(ctx, KeyHandlerName, h.onKey)
}

// liveVM is the VM named name that obj belongs to, or nil once it is gone
// (read from the API when the cache lacks it: deleting an alpha object on
// a lagging cache would delete a live VM's droplet).
func (h *handler) liveVM(obj metav1.Object, name string) (*hfv1.VirtualMachine, error) {
	vm, err := h.vms.Cache().Get(obj.GetNamespace(), name)
	if apierrors.IsNotFound(err) {
		vm, err = h.vms.Get(obj.GetNamespace(), name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	refs := obj.GetOwnerReferences()
	for _, ref := range refs {
		if ref.UID == vm.UID {
			return vm, nil
		}
	}
	if len(refs) == 0 {
		return vm, nil
	}
	return nil, nil // a namesake: the alpha object's own VM is gone
}

// tokens are every token this installation may have used, keyed by hash:
// an alpha droplet or key whose VM is gone is deleted with whichever
// token's account has it (DigitalOcean answers 404 to the others).
func (h *handler) tokens() map[string]string {
	return sweeper.CachedTokens(h.namespace, h.droplets.Cache(), h.envs, h.secrets)
}

// deleteEverywhere deletes one droplet or key by ID with each token until
// an account has it; found is false when none does (it is gone).
func (h *handler) deleteEverywhere(del func(context.Context, *godo.Client) (held bool, err error)) (found bool, err error) {
	tokens := h.tokens()
	if len(tokens) == 0 {
		// Gone or not, no one could say: it is looked for again later.
		return false, errNoToken
	}
	ctx, cancel := digitalocean.CallContext(h.ctx)
	defer cancel()
	for _, token := range tokens {
		client, err := h.clients.For(token)
		if err != nil {
			return false, err
		}
		held, err := del(ctx, client)
		if err == nil && !held {
			continue
		}
		return err == nil, err
	}
	return false, nil
}
