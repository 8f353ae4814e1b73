package controllers

import (
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	hfcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io/v1"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	corecontrollers "github.com/rancher/wrangler/v3/pkg/generated/controllers/core/v1"
	"k8s.io/client-go/tools/record"
)

// Set is what every controller's Register is given: the generated
// controllers of each kind the controllers watch or write, from the
// factories pkg/app starts (one informer per kind, shared by all), and what
// the controllers share beside them. Each Register takes what it needs.
type Set struct {
	VMs             hfcontrollers.VirtualMachineController
	Environments    hfcontrollers.EnvironmentController
	Templates       hfcontrollers.VirtualMachineTemplateController
	ScheduledEvents hfcontrollers.ScheduledEventController
	Droplets        provcontrollers.DropletController
	Keys            provcontrollers.KeyController
	WarmPools       provcontrollers.WarmPoolController
	Secrets         corecontrollers.SecretController
	// DigitalOcean holds one client and one rate limiter per token.
	DigitalOcean *digitalocean.Clients
	// Recorder writes Events into the namespace.
	Recorder record.EventRecorder
}
