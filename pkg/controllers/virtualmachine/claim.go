package virtualmachine

import (
	"math/rand/v2"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshkey"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// maxClaimAttempts bounds the members one pass tries to claim: another
// worker may take each first, and a VM never waits for the pool.
const maxClaimAttempts = 3

// taken is a pool member a VM claimed, and its key pair (none under the
// Environment's shared key, which the VM uses as it is).
type taken struct {
	member                *v1alpha1.Droplet
	privateKey, publicKey []byte
}

// claimFromPool gives a new VM a ready droplet of its Environment's warm
// pool for its template, when the pool's request is the VM's. It runs only
// while nothing of the VM's exists: a Droplet, or a key pair the VM may
// already use. nil means the normal path, at once.
func (h *handler) claimFromPool(vm *hfv1.VirtualMachine, cfg *config.Droplet, shared bool) (*taken, error) {
	pool := h.poolFor(vm)
	if pool == nil {
		return nil, nil
	}
	members, err := h.droplets.Cache().List(vm.Namespace, labels.SelectorFromSet(labels.Set{v1alpha1.WarmPoolLabel: pool.Name}))
	if err != nil {
		return nil, err
	}
	log := logrus.WithField("vm", vm.Name).WithField("pool", pool.Name)
	if m := h.claimedBy(vm, members); m != nil {
		// Claimed by an earlier pass whose objects were never applied.
		return h.takeMember(vm, m, shared)
	}
	hash, err := h.requestHash(vm, cfg, shared)
	if err != nil || hash != pool.Spec.RequestHash {
		// The pool is made from another request (or being replaced): its
		// droplets are not what this VM asked for.
		return nil, err
	}
	if fresh, err := h.isFirstGenerate(vm, shared); err != nil || !fresh {
		return nil, err
	}
	candidates := claimable(members, hash)
	// Workers claiming at once each start elsewhere, so they rarely collide.
	rand.Shuffle(len(candidates), func(i, j int) { candidates[i], candidates[j] = candidates[j], candidates[i] })
	for _, m := range candidates[:min(len(candidates), maxClaimAttempts)] {
		claimed := m.DeepCopy()
		claimed.Status.Claim = &v1alpha1.ClaimRef{VirtualMachine: vm.Name, UID: string(vm.UID), At: metav1.Now()}
		// Conditional on the cached copy's resourceVersion: of two VMs
		// claiming one member, the second write conflicts.
		updated, err := h.droplets.UpdateStatus(claimed)
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			// The write may have been applied: the next pass finds the
			// member claimed by this VM.
			return nil, err
		}
		h.claims.Store(vm.UID, updated.Name)
		log.WithField("member", updated.Name).WithField("droplet", updated.Status.DropletID).Info("claimed a warm pool droplet")
		h.recorder.Eventf(vm, corev1.EventTypeNormal, v1alpha1.ReasonClaimedFromPool,
			"took droplet %d from warm pool %q instead of creating one", updated.Status.DropletID, pool.Name)
		return h.takeMember(vm, updated, shared)
	}
	log.WithField("candidates", len(candidates)).Info("no warm pool droplet to take; creating one")
	metrics.WarmPoolMiss(pool.Spec.Environment, pool.Spec.Template)
	return nil, nil
}

// poolFor is the WarmPool of the VM's Environment and template, if any.
func (h *handler) poolFor(vm *hfv1.VirtualMachine) *v1alpha1.WarmPool {
	pools, err := h.pools.List(vm.Namespace, labels.Everything())
	if err != nil {
		return nil
	}
	for _, p := range pools {
		if p.DeletionTimestamp == nil && p.Spec.Environment == vm.Status.EnvironmentId && p.Spec.Template == vm.Spec.VirtualMachineTemplateId {
			return p
		}
	}
	return nil
}

// claimedBy is the member an earlier pass claimed for vm, if any. This
// process remembers its own claims, which the cache may not show yet.
func (h *handler) claimedBy(vm *hfv1.VirtualMachine, members []*v1alpha1.Droplet) *v1alpha1.Droplet {
	if name, ok := h.claims.Load(vm.UID); ok {
		if m, err := h.droplets.Get(vm.Namespace, name.(string), metav1.GetOptions{}); err == nil && claimedByVM(m, vm) {
			return m
		}
	}
	for _, m := range members {
		if claimedByVM(m, vm) {
			return m
		}
	}
	return nil
}

func claimedByVM(m *v1alpha1.Droplet, vm *hfv1.VirtualMachine) bool {
	return m.DeletionTimestamp == nil && m.Status.Claim != nil && m.Status.Claim.UID == string(vm.UID)
}

// claimable are the members a VM of request hash may take: made from that
// request, checked like a VM's droplet, unclaimed and not going away.
func claimable(members []*v1alpha1.Droplet, hash string) []*v1alpha1.Droplet {
	var out []*v1alpha1.Droplet
	for _, m := range members {
		if m.IsPoolMember() && m.Spec.Pool.RequestHash == hash && m.DeletionTimestamp == nil &&
			m.Status.Claim == nil && m.Status.DropletID != 0 && v1alpha1.Ready.IsTrue(m) && v1alpha1.Reachable.IsTrue(m) {
			out = append(out, m)
		}
	}
	return out
}

// requestHash is the RequestHash of the droplet the VM would be created
// with; a pool's member may serve it when the pool's is the same.
func (h *handler) requestHash(vm *hfv1.VirtualMachine, cfg *config.Droplet, shared bool) (string, error) {
	token := cfg.Token
	if token == "" {
		var err error
		if token, err = digitalocean.ReadToken(h.secrets.Cache(), vm.Namespace,
			v1alpha1.SecretKeyRef{Name: cfg.TokenSecret, Key: config.TokenSecretKey}); err != nil {
			return "", nil // the normal path reports the token
		}
	}
	keyScope := config.KeyScopeVM
	if shared {
		keyScope = SharedKeyName(vm.Status.EnvironmentId)
	}
	spec := droplet(vm, cfg, v1alpha1.SecretKeyRef{}, h.opts.InstallationID).Spec
	return digitalocean.RequestHash(spec, keyScope, digitalocean.TokenHash(token)), nil
}

// isFirstGenerate: the API has no Droplet of the VM and, with a key pair of
// its own, no key-pair Secret: nothing the VM has would be replaced. The
// cache alone could lag behind this handler's own apply.
func (h *handler) isFirstGenerate(vm *hfv1.VirtualMachine, shared bool) (bool, error) {
	if _, err := h.droplets.Get(vm.Namespace, vm.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		return false, err
	}
	if shared {
		return true, nil
	}
	if _, err := h.secrets.Cache().Get(vm.Namespace, SSHSecretName(vm)); err == nil {
		return false, nil
	}
	_, err := h.secrets.Get(vm.Namespace, SSHSecretName(vm), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

// takeMember reads the claimed member's key pair for the VM's Secret.
func (h *handler) takeMember(vm *hfv1.VirtualMachine, m *v1alpha1.Droplet, shared bool) (*taken, error) {
	t := &taken{member: m}
	if shared {
		return t, nil
	}
	secret, err := h.memberSecret(m)
	if err != nil {
		return nil, err
	}
	t.privateKey, t.publicKey = secret.Data[sshkey.PrivateKeyField], secret.Data[sshkey.PublicKeyField]
	return t, nil
}

// memberSecret is the Secret of the key pair the member's droplet was
// created with: the one its Key registered.
func (h *handler) memberSecret(m *v1alpha1.Droplet) (*corev1.Secret, error) {
	if len(m.Spec.KeyRefs) == 0 {
		return nil, apierrors.NewNotFound(v1alpha1.Resource("keys"), "")
	}
	k, err := h.keys.Cache().Get(m.Namespace, m.Spec.KeyRefs[0])
	if apierrors.IsNotFound(err) {
		k, err = h.keys.Get(m.Namespace, m.Spec.KeyRefs[0], metav1.GetOptions{})
	}
	if err != nil {
		return nil, err
	}
	name := k.Spec.PublicKeySecretRef.Name
	s, err := h.secrets.Cache().Get(m.Namespace, name)
	if apierrors.IsNotFound(err) {
		s, err = h.secrets.Get(m.Namespace, name, metav1.GetOptions{})
	}
	return s, err
}

// claimed makes spec the VM's droplet taken from the member: adopted by
// its ID, never created, and with no Key of its own (the droplet accepts
// the member's key, now in the VM's Secret, or the shared one).
func (t *taken) claimed(spec *v1alpha1.DropletSpec, shared bool) {
	spec.Name = t.member.Spec.Name
	spec.ClaimedDropletID = t.member.Status.DropletID
	spec.Pool = t.member.Spec.Pool.DeepCopy()
	if !shared {
		spec.KeyRefs = nil
	}
}
