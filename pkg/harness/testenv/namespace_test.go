package testenv

import (
	"context"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func TestNamespaceName(t *testing.T) {
	for _, in := range []string{
		"TestVM",
		"TestVM/create_and_delete",
		"Test__Weird//Name--",
		"/",
		strings.Repeat("TestVeryLongName", 10),
	} {
		got := namespaceName(in)
		if len(got) > 63 || !dnsLabel.MatchString(got) {
			t.Errorf("namespaceName(%q) = %q: not a DNS label of at most 63 chars", in, got)
		}
	}
	if a, b := namespaceName("TestX"), namespaceName("TestX"); a == b {
		t.Errorf("two namespaces for the same test got the same name %q", a)
	}
	if got := namespaceName("TestVM/create_and_delete"); !strings.HasPrefix(got, "testvm-create-and-delete-") {
		t.Errorf("got %q", got)
	}
}

func TestNewNamespace(t *testing.T) {
	env := Require(t)
	ns := env.NewNamespace(t)
	client := kubernetes.NewForConfigOrDie(env.Config())
	if _, err := client.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
}
