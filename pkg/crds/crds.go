// Package crds defines the Droplet, Key and WarmPool CustomResourceDefinitions from the Go types.
package crds

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/rancher/wrangler/v3/pkg/crd"
	"github.com/rancher/wrangler/v3/pkg/yaml"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

var ageColumn = apiextv1.CustomResourceColumnDefinition{
	Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp",
}

func intColumn(name, path string) apiextv1.CustomResourceColumnDefinition {
	return apiextv1.CustomResourceColumnDefinition{Name: name, Type: "integer", JSONPath: path}
}

// stateColumn always says what the object is doing or what stops it, so
// the default view is never blank when something is wrong.
var stateColumn = apiextv1.CustomResourceColumnDefinition{
	Name: "State", Type: "string", JSONPath: ".status.state",
}

// messageColumn explains State; priority 1 shows it only with -o wide.
var messageColumn = apiextv1.CustomResourceColumnDefinition{
	Name: "Message", Type: "string", JSONPath: ".status.message", Priority: 1,
}

// priceColumns say what a droplet costs, with -o wide.
var priceColumns = []apiextv1.CustomResourceColumnDefinition{
	{Name: "Price/h", Type: "string", JSONPath: ".status.priceHourly", Priority: 1},
	{Name: "Price/mo", Type: "string", JSONPath: ".status.priceMonthly", Priority: 1},
}

// autoColumns show how an auto-sized pool (warm_pool: auto) chose its
// size; blank for a fixed size.
var autoColumns = []apiextv1.CustomResourceColumnDefinition{
	{Name: "Auto", Type: "integer", JSONPath: ".status.auto.size"},
	{Name: "Basis", Type: "string", JSONPath: ".status.auto.basis"},
	{Name: "Arrivals/min", Type: "number", JSONPath: ".status.auto.arrivalsPerMinute", Priority: 1},
	{Name: "Refill s", Type: "integer", JSONPath: ".status.auto.refillSeconds", Priority: 1},
}

func definitions() ([]crd.CRD, error) {
	// Spelled out rather than taken from the generated register code, so that
	// codegen still builds when that code is missing.
	gv := "provisioning.hobbyfarm.io/v1alpha1"
	dropletSchema, err := schemaOf("Droplet", v1alpha1.Droplet{})
	if err != nil {
		return nil, err
	}
	keySchema, err := schemaOf("Key", v1alpha1.Key{})
	if err != nil {
		return nil, err
	}
	poolSchema, err := schemaOf("WarmPool", v1alpha1.WarmPool{})
	if err != nil {
		return nil, err
	}
	return []crd.CRD{
		crd.NamespacedType("Droplet."+gv).
			WithSchema(dropletSchema).
			WithStatus().
			WithShortNames("do-droplet", "do-droplets").
			WithCategories("hobbyfarm").
			WithColumn("VM", ".spec.virtualMachine").
			WithCustomColumn(intColumn("ID", ".status.dropletID")).
			WithColumn("Status", ".status.status").
			WithColumn("Public IP", ".status.publicIPv4").
			WithColumn("Region", ".status.region").
			WithCustomColumn(stateColumn).
			WithColumn("Reachable", `.status.conditions[?(@.type=="Reachable")].status`).
			WithCustomColumn(ageColumn).
			WithCustomColumn(messageColumn).
			WithCustomColumn(priceColumns...),
		crd.NamespacedType("Key."+gv).
			WithSchema(keySchema).
			WithStatus().
			WithShortNames("do-key", "do-keys").
			WithCategories("hobbyfarm").
			WithCustomColumn(intColumn("ID", ".status.keyID")).
			WithColumn("Fingerprint", ".status.fingerprint").
			WithCustomColumn(stateColumn).
			WithCustomColumn(ageColumn).
			WithCustomColumn(messageColumn),
		crd.NamespacedType("WarmPool."+gv).
			WithSchema(poolSchema).
			WithStatus().
			WithShortNames("do-warmpool", "do-warmpools").
			WithCategories("hobbyfarm").
			WithColumn("Environment", ".spec.environment").
			WithColumn("Template", ".spec.template").
			WithCustomColumn(intColumn("Wanted", ".status.wanted")).
			WithCustomColumn(intColumn("Ready", ".status.ready")).
			WithCustomColumn(intColumn("Booting", ".status.booting")).
			WithCustomColumn(intColumn("Claims", ".status.claims")).
			WithCustomColumn(autoColumns...).
			WithCustomColumn(ageColumn),
	}, nil
}

// Objects returns the CRDs as API objects.
func Objects() ([]*apiextv1.CustomResourceDefinition, error) {
	defs, err := definitions()
	if err != nil {
		return nil, err
	}
	var out []*apiextv1.CustomResourceDefinition
	for _, def := range defs {
		obj, err := def.ToCustomResourceDefinition()
		if err != nil {
			return nil, err
		}
		// Through JSON: wrangler's map holds numbers (a column's priority)
		// as json.Number, which the unstructured converter cannot read.
		data, err := json.Marshal(obj.(*unstructured.Unstructured).Object)
		if err != nil {
			return nil, err
		}
		typed := &apiextv1.CustomResourceDefinition{}
		if err := json.Unmarshal(data, typed); err != nil {
			return nil, err
		}
		out = append(out, typed)
	}
	return out, nil
}

// Install creates or updates the CRDs and waits until they are established.
func Install(ctx context.Context, cfg *rest.Config) error {
	factory, err := crd.NewFactoryFromClient(cfg)
	if err != nil {
		return err
	}
	defs, err := definitions()
	if err != nil {
		return err
	}
	return factory.BatchCreateCRDs(ctx, defs...).BatchWait()
}

// WriteYAML writes one manifest per CRD into dir, as the Helm chart ships them.
func WriteYAML(dir string) error {
	objs, err := Objects()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, obj := range objs {
		obj.TypeMeta.APIVersion = apiextv1.SchemeGroupVersion.String()
		obj.TypeMeta.Kind = "CustomResourceDefinition"
		data, err := yaml.Export(obj)
		if err != nil {
			return err
		}
		name := strings.SplitN(obj.Name, ".", 2)[0] + ".yaml"
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}
