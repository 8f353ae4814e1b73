package drain

import (
	"context"
	"fmt"
	"slices"
	"strings"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/sweeper"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	dropletsGVR  = v1alpha1.SchemeGroupVersion.WithResource("droplets")
	keysGVR      = v1alpha1.SchemeGroupVersion.WithResource("keys")
	warmPoolsGVR = v1alpha1.SchemeGroupVersion.WithResource("warmpools")
	vmsGVR       = hfv1.SchemeGroupVersion.WithResource("virtualmachines")
	envsGVR      = hfv1.SchemeGroupVersion.WithResource("environments")
)

// objects are the installation's objects that say which tokens and keys it used.
type objects struct {
	droplets []*v1alpha1.Droplet
	keys     []*v1alpha1.Key
	envs     []*hfv1.Environment
}

func readObjects(ctx context.Context, k kube, namespace string) (objects, error) {
	var o objects
	var err error
	if o.droplets, err = list[v1alpha1.Droplet](ctx, k, dropletsGVR, namespace); err != nil {
		return o, err
	}
	if o.keys, err = list[v1alpha1.Key](ctx, k, keysGVR, namespace); err != nil {
		return o, err
	}
	o.envs, err = list[hfv1.Environment](ctx, k, envsGVR, namespace)
	return o, err
}

// list lists a resource of namespace as typed objects.
func list[T any](ctx context.Context, k kube, gvr schema.GroupVersionResource, namespace string) ([]*T, error) {
	items, err := k.dyn.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", gvr.Resource, err)
	}
	out := make([]*T, 0, len(items.Items))
	for _, item := range items.Items {
		obj := new(T)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, obj); err != nil {
			return nil, fmt.Errorf("%s %s: %w", gvr.Resource, item.GetName(), err)
		}
		out = append(out, obj)
	}
	return out, nil
}

// token is one DigitalOcean token the installation uses and the Secrets that hold it.
type token struct {
	hash, token string
	secrets     []string
}

func (t token) names() string {
	if len(t.secrets) == 0 {
		return "an Environment's plain-text token"
	}
	return "Secret " + strings.Join(t.secrets, ", Secret ")
}

// tokensOf are the tokens of the installation, as the orphan sweep finds them,
// sorted by hash. A Droplet or Key that may hold something in DigitalOcean
// whose token cannot be read stops the drain: its droplet or key would stay.
func tokensOf(ctx context.Context, k kube, namespace string, o objects) ([]token, error) {
	get := func(ns, name string) (*corev1.Secret, error) {
		return k.client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	}
	secrets := map[string][]string{} // token hash -> Secret names
	read := func(ref v1alpha1.SecretKeyRef) (string, error) {
		t, err := digitalocean.ReadTokenWith(get, namespace, ref)
		if err == nil {
			hash := digitalocean.TokenHash(t)
			if !slices.Contains(secrets[hash], ref.Name) {
				secrets[hash] = append(secrets[hash], ref.Name)
			}
		}
		return t, err
	}
	var refs []v1alpha1.SecretKeyRef
	for _, d := range o.droplets {
		refs = append(refs, d.Spec.TokenSecretRef)
		if v1alpha1.MayExistInDigitalOcean(d) && !d.Status.NotCreated {
			if _, err := read(d.Spec.TokenSecretRef); err != nil {
				return nil, fmt.Errorf("Droplet %s may hold a droplet in DigitalOcean and its token cannot be read: %w", d.Name, err)
			}
		}
	}
	for _, key := range o.keys {
		refs = append(refs, key.Spec.TokenSecretRef)
		if mayHoldKey(key) {
			if _, err := read(key.Spec.TokenSecretRef); err != nil {
				return nil, fmt.Errorf("Key %s may hold an SSH key in DigitalOcean and its token cannot be read: %w", key.Name, err)
			}
		}
	}
	var out []token
	for hash, t := range sweeper.Tokens(refs, o.envs, read) {
		out = append(out, token{hash: hash, token: t, secrets: secrets[hash]})
	}
	slices.SortFunc(out, func(a, b token) int { return strings.Compare(a.hash, b.hash) })
	return out, nil
}

// mayHoldKey: DigitalOcean may have k's key; a Key whose every create was
// refused, or that never sent one, has none.
func mayHoldKey(k *v1alpha1.Key) bool {
	return k.Status.KeyID != 0 || k.Status.Fingerprint != "" || (v1alpha1.Created.GetStatus(k) != "" && !k.Status.NotCreated)
}
