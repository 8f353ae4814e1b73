package alphatest

import (
	"context"
	"fmt"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Writer is where the alpha's state is written: the cluster at Config, and
// the DigitalOcean API at APIURL (a fake.Server's URL) with Token, the
// token the VM's Environment names.
type Writer struct {
	Config *rest.Config
	APIURL string
	Token  string
}

// VMOptions add the alpha's own defects, which its handlers' lagging cache
// left on about one VM in four.
type VMOptions struct {
	// SecretRewritten: the VM's Secret, and so the Key's spec.key, got a new
	// key pair after the DigitalOcean key and droplet were made from the
	// first. The droplet refuses the Secret's key.
	SecretRewritten bool
	// DuplicateKey: a second DigitalOcean key of the Key's name, which no
	// object records. DigitalOcean refuses a public key already on the
	// account, so it holds another pair: the Secret's, with SecretRewritten
	// (a stale pass created it from the rewritten spec.key and lost its
	// status write); otherwise a pair the Secret held before (the recorded
	// key came from its replacement), whose private key is lost.
	DuplicateKey bool
}

// Provisioned is what Provision made.
type Provisioned struct {
	Namespace, VM                    string
	VMUID                            types.UID
	DropletName, KeyName, SecretName string
	// DropletID and KeyID are recorded in status.droplet.id and status.key.id.
	DropletID, KeyID int
	// DuplicateKeyID is the unrecorded key of VMOptions.DuplicateKey.
	DuplicateKeyID      int
	PublicIP, PrivateIP string
	// PrivateKeyPEM is the Secret's private key, as Gargantua's shell uses it.
	PrivateKeyPEM []byte
	// DropletPrivateKeyPEM is the private key the droplet accepts; it is
	// not PrivateKeyPEM when the Secret was rewritten.
	DropletPrivateKeyPEM []byte
}

// Provision writes what the alpha leaves for a running VM: the VM's
// finalizer, secret_name and status; its Secret, Key and Droplet objects;
// its DigitalOcean key and droplet, the droplet active. vm must exist, be
// labelled for the digitalocean provisioner (the alpha watched no other)
// and have its environment_id.
func Provision(ctx context.Context, w Writer, vm *hfv1.VirtualMachine, opts VMOptions) (*Provisioned, error) {
	p, err := newProvisioning(ctx, w, vm, opts)
	if err != nil {
		return nil, fmt.Errorf("alphatest: provision %s/%s: %w", vm.Namespace, vm.Name, err)
	}
	if err := p.run(ctx); err != nil {
		return nil, fmt.Errorf("alphatest: provision %s/%s: %w", vm.Namespace, vm.Name, err)
	}
	return p.out, nil
}

// provisioning is one VM's run through the alpha's handlers.
type provisioning struct {
	kube kube
	do   doAPI
	vm   *hfv1.VirtualMachine
	cfg  alphaConfig
	opts VMOptions
	// The key pairs: the Secret was made with initial and ends with final;
	// the recorded DigitalOcean key, and so the droplet, are of recorded;
	// the unrecorded DigitalOcean key is of duplicate.
	initial, recorded, final, duplicate keyPair
	// recordedKey is the DigitalOcean key in the Key's status.
	recordedKey doKey
	out         *Provisioned
}

func newProvisioning(ctx context.Context, w Writer, vm *hfv1.VirtualMachine, opts VMOptions) (*provisioning, error) {
	dyn, err := dynamic.NewForConfig(w.Config)
	if err != nil {
		return nil, err
	}
	k := kube{dyn: dyn, ns: vm.Namespace}
	current := &hfv1.VirtualMachine{}
	if err := k.getTyped(ctx, vmsResource, vm.Name, current); err != nil {
		return nil, err
	}
	if got := current.Labels["hobbyfarm.io/provisioner"]; got != "digitalocean" {
		return nil, fmt.Errorf("the alpha handles VMs labelled hobbyfarm.io/provisioner=digitalocean, not %q", got)
	}
	if current.Status.EnvironmentId == "" {
		return nil, fmt.Errorf("VM has no status.environment_id yet")
	}
	env := &hfv1.Environment{}
	if err := k.getTyped(ctx, envsResource, current.Status.EnvironmentId, env); err != nil {
		return nil, err
	}

	p := &provisioning{kube: k, do: newDOAPI(w.APIURL, w.Token), vm: current,
		cfg: alphaConfig{env: env, vm: current}, opts: opts}
	if err := p.makeKeyPairs(); err != nil {
		return nil, err
	}
	p.out = &Provisioned{
		Namespace: current.Namespace, VM: current.Name, VMUID: current.UID,
		DropletName: alpha.DropletName(current.Name), KeyName: alpha.KeyName(current.Name),
		SecretName:           alpha.SecretName(current.Name),
		PrivateKeyPEM:        []byte(p.final.private),
		DropletPrivateKeyPEM: []byte(p.recorded.private),
	}
	return p, nil
}

// duplicateFirst: the unrecorded key came before the recorded one, from
// the pair the Secret was first made with.
func (p *provisioning) duplicateFirst() bool { return p.opts.DuplicateKey && !p.opts.SecretRewritten }

func (p *provisioning) makeKeyPairs() error {
	n := 1
	if p.opts.SecretRewritten || p.opts.DuplicateKey {
		n = 2
	}
	pairs, err := newKeyPairs(n)
	if err != nil {
		return err
	}
	p.initial, p.recorded, p.final = pairs[0], pairs[0], pairs[0]
	switch {
	case p.opts.SecretRewritten:
		p.final, p.duplicate = pairs[1], pairs[1]
	case p.duplicateFirst():
		p.duplicate, p.initial = pairs[1], pairs[1]
	}
	return nil
}

// run writes in the order the alpha's handlers wrote.
func (p *provisioning) run(ctx context.Context) error {
	steps := []func(context.Context) error{
		p.addVMFinalizer,
		p.createSecret,
		p.createKey,
		p.setSecretName,
		p.createDroplet,
	}
	if p.opts.SecretRewritten {
		steps = append(steps, func(ctx context.Context) error { return p.rewriteSecret(ctx, p.final) })
		if p.opts.DuplicateKey {
			steps = append(steps, p.createDuplicateKey)
		}
	}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}
