package testenv

import (
	"os/exec"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Installing is idempotent for the CRDs Main installed, and a new CRD is usable on return.
func TestInstallCRDs(t *testing.T) {
	env := Require(t)
	ctx := testContext(t)
	if err := env.InstallCRDs(ctx, HobbyFarmCRDs()...); err != nil {
		t.Fatal(err)
	}

	widget := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.testenv.hobbyfarm.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "testenv.hobbyfarm.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"size": {Type: "integer"}}},
					},
				}},
			}},
		},
	}
	if err := env.InstallCRDs(ctx, widget); err != nil {
		t.Fatal(err)
	}
	ns := env.NewNamespace(t)
	_, dyn := clients(t, env)
	gvr := schema.GroupVersionResource{Group: "testenv.hobbyfarm.io", Version: "v1", Resource: "widgets"}
	_, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "testenv.hobbyfarm.io/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w"}, "spec": map[string]any{"size": int64(3)},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create right after InstallCRDs: %v", err)
	}
}

// The admin kubeconfig works with kubectl.
func TestKubeconfigWithKubectl(t *testing.T) {
	env := Require(t)
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not installed")
	}
	out, err := exec.Command(kubectl, "--kubeconfig", env.KubeconfigPath, "get", "crd", "virtualmachines.hobbyfarm.io", "-o", "name").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "virtualmachines.hobbyfarm.io") {
		t.Errorf("kubectl output: %s", out)
	}
}
