// Package gargantuasim does what Gargantua does to a VirtualMachine of a
// third-party provisioner, for tests, the playground and the benchmark: call by
// call, per Gargantua version, as read from Gargantua's source (see the
// gargantua-contract note). Clients.CreateVM is the go.mod version's
// on-demand path in one call; Gargantua (see New) plays a whole version:
// sessions, scheduled events' VM sets and the loops that react to VMs.
package gargantuasim

import (
	"context"
	"fmt"
	"maps"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io"
	hfcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io/v1"
	"github.com/rancher/wrangler/v3/pkg/generated/controllers/core"
	corecontrollers "github.com/rancher/wrangler/v3/pkg/generated/controllers/core/v1"
	"github.com/rancher/wrangler/v3/pkg/generic"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Clients are the typed clients a simulated Gargantua uses. They are never
// started: only their API calls are used.
type Clients struct {
	VMs       hfcontrollers.VirtualMachineClient
	Envs      hfcontrollers.EnvironmentClient
	Templates hfcontrollers.VirtualMachineTemplateClient
	Secrets   corecontrollers.SecretClient
	VMSets    VMSetClient
	Claims    ClaimClient
	Events    hfcontrollers.ScheduledEventClient
}

// VMSetClient and ClaimClient are typed clients for the kinds the provisioner
// itself never touches, so pkg/generated has none for them.
type (
	VMSetClient = generic.ClientInterface[*hfv1.VirtualMachineSet, *hfv1.VirtualMachineSetList]
	ClaimClient = generic.ClientInterface[*hfv1.VirtualMachineClaim, *hfv1.VirtualMachineClaimList]
)

// NewClients builds clients for cfg.
func NewClients(cfg *rest.Config) (*Clients, error) {
	hf, err := hobbyfarm.NewFactoryFromConfig(cfg)
	if err != nil {
		return nil, err
	}
	c, err := core.NewFactoryFromConfig(cfg)
	if err != nil {
		return nil, err
	}
	v1 := hf.Hobbyfarm().V1()
	return &Clients{
		VMs: v1.VirtualMachine(), Envs: v1.Environment(), Templates: v1.VirtualMachineTemplate(), Secrets: c.Core().V1().Secret(),
		Events: v1.ScheduledEvent(),
		VMSets: generic.NewController[*hfv1.VirtualMachineSet, *hfv1.VirtualMachineSetList](
			hfv1.SchemeGroupVersion.WithKind("VirtualMachineSet"), "virtualmachinesets", true, hf.ControllerFactory()),
		Claims: generic.NewController[*hfv1.VirtualMachineClaim, *hfv1.VirtualMachineClaimList](
			hfv1.SchemeGroupVersion.WithKind("VirtualMachineClaim"), "virtualmachineclaims", true, hf.ControllerFactory()),
	}, nil
}

// Environment is a DigitalOcean Environment as an operator writes it.
func Environment(namespace, name string, specifics map[string]string, mapping map[string]map[string]string) *hfv1.Environment {
	return &hfv1.Environment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace,
			Annotations: map[string]string{ProvisionerKey: "digitalocean"}},
		Spec: hfv1.EnvironmentSpec{
			DisplayName:          name,
			Provider:             "digitalocean",
			EnvironmentSpecifics: specifics,
			TemplateMapping:      mapping,
		},
	}
}

// Template is a VirtualMachineTemplate.
func Template(namespace, name, image string, configMap map[string]string) *hfv1.VirtualMachineTemplate {
	return &hfv1.VirtualMachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       hfv1.VirtualMachineTemplateSpec{Name: name, Image: image, ConfigMap: configMap},
	}
}

// TokenSecret holds a DigitalOcean token under key "token".
func TokenSecret(namespace, name, token string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Data:       map[string][]byte{"token": []byte(token)},
	}
}

// Setup is what an operator sets up in a namespace before any VM exists: a
// token Secret, a template and a DigitalOcean Environment mapping the
// template to Image and Size in Region.
type Setup struct {
	Namespace, Token, TokenSecret      string
	Template, Image, Size, Region, Env string
	// Extra is merged into the Environment's environment_specifics.
	Extra map[string]string
}

// CreateSetup creates s.Namespace and what s describes in it, and returns the
// Environment as created.
func CreateSetup(ctx context.Context, cfg *rest.Config, s Setup) (*hfv1.Environment, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.Namespace}}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating namespace: %w", err)
	}
	c, err := NewClients(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := c.Secrets.Create(TokenSecret(s.Namespace, s.TokenSecret, s.Token)); err != nil {
		return nil, fmt.Errorf("creating token secret: %w", err)
	}
	if _, err := c.Templates.Create(Template(s.Namespace, s.Template, s.Image, nil)); err != nil {
		return nil, fmt.Errorf("creating template: %w", err)
	}
	specifics := map[string]string{"region": s.Region, "token-secret": s.TokenSecret}
	maps.Copy(specifics, s.Extra)
	env, err := c.Envs.Create(Environment(s.Namespace, s.Env, specifics,
		map[string]map[string]string{s.Template: {"size": s.Size, "image": s.Image}}))
	if err != nil {
		return nil, fmt.Errorf("creating environment: %w", err)
	}
	return env, nil
}

// CreateVM creates a VM the way the go.mod version's claim controller does:
// create it, then write its status with the resourceVersion the create
// returned. An error from the second write (wrapping ErrSessionTainted) is
// what would taint a user's session. Unlike StartSession it makes no claim
// (so no owner), and provisioner, not the Environment, sets the label.
func (c *Clients) CreateVM(namespace, name string, env *hfv1.Environment, template string, provisioner string) (*hfv1.VirtualMachine, error) {
	vm := &hfv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: namespace,
			Labels: map[string]string{
				"dynamic":        "true",
				claimLabel:       "vmc-" + name,
				boundLabel:       "true",
				"ready":          "false",
				environmentLabel: env.Name,
				templateLabel:    template,
			},
		},
		Spec: hfv1.VirtualMachineSpec{
			VirtualMachineTemplateId: template,
			Protocol:                 "ssh",
			VirtualMachineClaimId:    "vmc-" + name,
			UserId:                   "user-1",
			SecretName:               "",
			Provision:                provisioner == "",
		},
	}
	if provisioner != "" {
		vm.Labels[ProvisionerKey] = provisioner
	}
	created, err := c.VMs.Create(vm)
	if err != nil {
		return nil, fmt.Errorf("creating VM %s: %w", name, err)
	}
	updated, err := c.writeFirstStatus(created, readyForProvisioning(env, true), false)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSessionTainted, err)
	}
	return updated, nil
}
