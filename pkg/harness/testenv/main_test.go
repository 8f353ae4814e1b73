package testenv

import (
	"context"
	"os"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

func TestMain(m *testing.M) {
	Main(m, Options{CRDs: HobbyFarmCRDs()})
}

// New gives a test its own control plane, gone after the test.
func TestNewPrivateEnv(t *testing.T) {
	shared := Require(t)
	var private *Env
	t.Run("private", func(t *testing.T) {
		private = New(t, Options{})
		if private.Config().Host == shared.Config().Host {
			t.Fatal("private env shares the shared env's apiserver")
		}
		kube := kubernetes.NewForConfigOrDie(private.Config())
		if _, err := kube.CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	if private == nil {
		t.Fatal("no private env")
	}
	if _, err := os.Stat(private.Dir); !os.IsNotExist(err) {
		t.Errorf("private env dir %s not removed after its test: %v", private.Dir, err)
	}
}
