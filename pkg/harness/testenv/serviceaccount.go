package testenv

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// tokenSeconds is how long a ServiceAccount token lasts: longer than any test run.
const tokenSeconds = 2 * 60 * 60

// ServiceAccountConfig creates the ServiceAccount if needed and returns a rest.Config
// that authenticates as it with a bound token from the TokenRequest API, so RBAC
// tests see exactly the permissions granted to that account.
func (e *Env) ServiceAccountConfig(ctx context.Context, namespace, name string) (*rest.Config, error) {
	client, err := kubernetes.NewForConfig(e.Config())
	if err != nil {
		return nil, err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	_, err = client.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("testenv: create ServiceAccount %s/%s: %w", namespace, name, err)
	}
	expiration := int64(tokenSeconds)
	tr, err := client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiration},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("testenv: token for ServiceAccount %s/%s: %w", namespace, name, err)
	}
	return &rest.Config{
		Host:            e.host,
		BearerToken:     tr.Status.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: e.certs.caCert},
		QPS:             200,
		Burst:           400,
	}, nil
}
