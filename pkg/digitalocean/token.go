package digitalocean

import (
	"fmt"
	"strings"

	"github.com/digitalocean/godo"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	corecontrollers "github.com/rancher/wrangler/v3/pkg/generated/controllers/core/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// TokenError says why no token could be read; its text names the Secret and key.
type TokenError struct{ msg string }

func (e *TokenError) Error() string { return e.msg }

// ReadToken reads the API token a SecretKeyRef points at, from the cache.
func ReadToken(secrets corecontrollers.SecretCache, namespace string, ref v1alpha1.SecretKeyRef) (string, error) {
	return ReadTokenWith(secrets.Get, namespace, ref)
}

// ForSecret returns the client for the token the Secret ref names in
// namespace.
func (c *Clients) ForSecret(secrets corecontrollers.SecretCache, namespace string, ref v1alpha1.SecretKeyRef) (*godo.Client, error) {
	token, err := ReadToken(secrets, namespace, ref)
	if err != nil {
		return nil, err
	}
	return c.For(token)
}

// ReadTokenWith reads the API token a SecretKeyRef points at with get, a
// cache's or a client's.
func ReadTokenWith(get func(namespace, name string) (*corev1.Secret, error), namespace string, ref v1alpha1.SecretKeyRef) (string, error) {
	if ref.Name == "" {
		return "", &TokenError{"no token Secret is set"}
	}
	secret, err := get(namespace, ref.Name)
	if apierrors.IsNotFound(err) {
		return "", &TokenError{fmt.Sprintf("Secret %q named by token-secret does not exist in namespace %q; create it with key %q holding the DigitalOcean API token", ref.Name, namespace, ref.Key)}
	} else if err != nil {
		return "", err
	}
	token := strings.TrimSpace(string(secret.Data[ref.Key]))
	if token == "" {
		return "", &TokenError{fmt.Sprintf("Secret %q has no key %q; add the DigitalOcean API token under key %q", ref.Name, ref.Key, ref.Key)}
	}
	return token, nil
}
