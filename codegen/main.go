// Command codegen regenerates pkg/generated, the deepcopy and register code of
// our API types, and the CRD manifests in the Helm chart. Run it from the
// repository root: go generate ./...
package main

import (
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/crds"
	controllergen "github.com/rancher/wrangler/v3/pkg/controller-gen"
	"github.com/rancher/wrangler/v3/pkg/controller-gen/args"
	"github.com/sirupsen/logrus"
)

const chartCRDDir = "chart/hf-provisioner-digitalocean/crds"

func main() {
	controllergen.Run(args.Options{
		OutputPackage: "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated",
		Boilerplate:   "scripts/boilerplate.go.txt",
		Groups: map[string]args.Group{
			"provisioning.hobbyfarm.io": {
				Types: []interface{}{
					v1alpha1.Droplet{},
					v1alpha1.Key{},
					v1alpha1.WarmPool{},
				},
				GenerateTypes: true,
			},
			// Gargantua's types live in its module; we only generate controllers for them.
			"hobbyfarm.io": {
				Types: []interface{}{
					hfv1.VirtualMachine{},
					hfv1.Environment{},
					hfv1.VirtualMachineTemplate{},
					hfv1.ScheduledEvent{},
				},
			},
		},
	})

	if err := crds.WriteYAML(chartCRDDir); err != nil {
		logrus.Fatalf("writing CRD manifests: %v", err)
	}
}
