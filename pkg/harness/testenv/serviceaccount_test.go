package testenv

import (
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// A fresh ServiceAccount is authenticated (it can ask who it is) but RBAC grants it nothing.
func TestServiceAccountHasNoPrivilegesByDefault(t *testing.T) {
	env := Require(t)
	ns := env.NewNamespace(t)
	ctx := testContext(t)

	cfg, err := env.ServiceAccountConfig(ctx, ns, "provisioner")
	if err != nil {
		t.Fatal(err)
	}
	sa, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}

	review, err := sa.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "system:serviceaccount:" + ns + ":provisioner"; review.Status.UserInfo.Username != want {
		t.Errorf("authenticated as %q, want %q", review.Status.UserInfo.Username, want)
	}

	_, err = sa.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("list secrets as a ServiceAccount without RBAC: want 403 Forbidden, got %v", err)
	}

	// Asking again for the same account reuses it.
	if _, err := env.ServiceAccountConfig(ctx, ns, "provisioner"); err != nil {
		t.Fatal(err)
	}
}
