// Package alpha knows what the original (alpha) DigitalOcean provisioner
// leaves in a cluster, so that this controller can take a running alpha
// installation over in place: its Droplet and Key objects (same kinds as
// ours, other fields), its key-pair Secrets and its finalizers. Nothing of
// the alpha's makes a new droplet or key; what it made is deleted by the
// IDs it recorded.
package alpha

// The alpha's finalizers. It removed each once its own cleanup had run;
// this controller removes them once its cleanup covers the object.
const (
	VMFinalizer      = "provisioning.hobbyfarm.io/digitalocean"
	DropletFinalizer = "provisioner.hobbyfarm.io/digitalocean-droplet-deleted"
	// KeyFinalizer is spelled with "provisioners", as the alpha spells it.
	KeyFinalizer = "provisioners.hobbyfarm.io/digitalocean-key-deleted"
)

// VMLabel names the VM on each of the alpha's Droplets, Keys and Secrets.
const VMLabel = "provisioning.hobbyfarm.io/virtual-machine"

// FieldManager is the manager of the fields the alpha wrote, its CRDs' among
// them (named after its binary, as client-go names managers).
const FieldManager = "hf-provisioner-digitalocean"

// Names the alpha gave a VM's objects; its droplet and DigitalOcean key
// carry the Droplet's and the Key's names.
func DropletName(vm string) string { return vm + "-droplet" }
func KeyName(vm string) string     { return vm + "-droplet-key" }
func SecretName(vm string) string  { return vm + "-droplet-keys" }
