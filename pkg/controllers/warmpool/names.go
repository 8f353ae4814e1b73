// Package warmpool keeps, per Environment and template with warm_pool set,
// booted and reachable droplets that a new VM takes instead of waiting for
// a create: it makes the WarmPools, sizes them from the running scheduled
// events, fills, drains and replaces their members, and deletes a member
// once the VM that claimed it holds its droplet.
package warmpool

import (
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshkey"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
)

// Handler names are part of the API: never rename them.
const (
	HandlerName            = "hf-provisioner-digitalocean-warmpool"
	EnvironmentHandlerName = "hf-provisioner-digitalocean-warmpool-from-environment"
)

const (
	// keyTypeAnnotation on a WarmPool is the config's ssh_key_type, which
	// only matters when a member's key pair is made.
	keyTypeAnnotation = "provisioning.hobbyfarm.io/ssh-key-type"
	memberPrefix      = "hfdo-pool-"
	sshSecretSuffix   = "-ssh"
	tokenSecretSuffix = "-token"
)

// PoolName is the WarmPool of env's template: a valid name of at most 63
// characters, shortened with a hash when needed.
func PoolName(env, template string) string { return digitalocean.DropletName(env + "-" + template) }

// newMemberName is random: a crash mid-fill leaves objects the next pass
// finds by label, never a name a later create collides with.
func newMemberName() string { return memberPrefix + rand.String(10) }

// memberSecretName holds a member's key pair, as <vm>-ssh does a VM's.
func memberSecretName(member string) string { return member + sshSecretSuffix }

// poolTokenSecretName holds the pool's copy of a plain-text token.
func poolTokenSecretName(pool string) string { return pool + tokenSecretSuffix }

func keyType(pool *v1alpha1.WarmPool) sshkey.Type {
	if t := pool.Annotations[keyTypeAnnotation]; t != "" {
		return sshkey.Type(t)
	}
	return sshkey.Types[0]
}

// ownedBy makes obj controller-owned by owner, so the garbage collector
// deletes it with owner.
func ownedBy(meta *metav1.ObjectMeta, apiVersion, kind, name string, uid types.UID) {
	controller := true
	meta.OwnerReferences = append(meta.OwnerReferences, metav1.OwnerReference{APIVersion: apiVersion, Kind: kind,
		Name: name, UID: uid, Controller: &controller})
}

func ownedByPool(meta *metav1.ObjectMeta, pool *v1alpha1.WarmPool) {
	ownedBy(meta, v1alpha1.SchemeGroupVersion.String(), "WarmPool", pool.Name, pool.UID)
}

func ownedByEnvironment(meta *metav1.ObjectMeta, env *hfv1.Environment) {
	ownedBy(meta, hfv1.SchemeGroupVersion.String(), "Environment", env.Name, env.UID)
}

// isControlledBy reports obj's controller owner reference naming uid.
func isControlledBy(obj metav1.Object, uid string) bool {
	ref := metav1.GetControllerOf(obj)
	return ref != nil && string(ref.UID) == uid
}
