package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// NewNamespace creates a namespace named after the test (sanitized, random suffix,
// at most 63 characters) and deletes it when the test ends. The namespace controller
// removes its contents in the background.
func (e *Env) NewNamespace(t testing.TB) string {
	t.Helper()
	client, err := kubernetes.NewForConfig(e.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   namespaceName(t.Name()),
		Labels: map[string]string{"hobbyfarm.io/testenv": "true"},
	}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("testenv: create namespace %s: %v", ns.Name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("testenv: delete namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}

// namespaceName turns a test name like "TestVM/create_and_delete" into a DNS label
// like "testvm-create-and-delete-1a2b3c".
func namespaceName(testName string) string {
	const maxLen, suffixLen = 63, 6
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(testName) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	base := b.String()
	if len(base) > maxLen-suffixLen-1 {
		base = base[:maxLen-suffixLen-1]
	}
	base = strings.Trim(base, "-")
	if base == "" {
		base = "test"
	}
	return base + "-" + randomHex(suffixLen)
}

func randomHex(n int) string {
	buf := make([]byte, (n+1)/2)
	_, _ = rand.Read(buf)
	return hex.EncodeToString(buf)[:n]
}
