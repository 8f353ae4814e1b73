package v1alpha1

import (
	"github.com/rancher/wrangler/v3/pkg/genericcondition"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// KnownDropletAnnotation on a VM holds the ID of the droplet an earlier
// Droplet object of the VM had when that object was deleted while the VM
// stayed. The next Droplet object adopts it from there: droplets made by a
// multi-create carry no tag naming their VM, so no lookup by tag would.
const KnownDropletAnnotation = "provisioning.hobbyfarm.io/droplet-id"

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Droplet is one DigitalOcean droplet made for one HobbyFarm VirtualMachine.
// It carries the VM's name and is controller-owned by the VM.
type Droplet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   DropletSpec   `json:"spec"`
	Status DropletStatus `json:"status,omitempty"`
}

// DropletSpec is the create request sent to DigitalOcean. It is frozen once
// the droplet exists: editing an Environment never touches a running droplet.
type DropletSpec struct {
	// VirtualMachine is the name of the HobbyFarm VirtualMachine this droplet serves.
	VirtualMachine string `json:"virtualMachine"`
	// Name is the droplet's hostname in DigitalOcean.
	Name string `json:"name,omitempty"`
	// Region is a region slug, or several separated by commas in order of
	// preference: each create goes to the first that can take it (see
	// Regions), and status.region says where the droplet is.
	Region string `json:"region,omitempty"`
	Size   string `json:"size,omitempty"`
	Image  string `json:"image,omitempty"`
	// KeyRefs names the Key objects whose DigitalOcean keys the droplet is created with.
	KeyRefs           []string `json:"keyRefs,omitempty"`
	Backups           bool     `json:"backups,omitempty"`
	IPv6              bool     `json:"ipv6,omitempty"`
	Monitoring        bool     `json:"monitoring,omitempty"`
	PrivateNetworking bool     `json:"privateNetworking,omitempty"`
	UserData          string   `json:"userData,omitempty"`
	// Tags are the droplet's DigitalOcean tags and the ones that identify
	// its VM to this controller. A create leaves out the VM's own
	// (hfdo-vm:, hfdo-vmname:): the droplet is found by its name, unique
	// per installation and namespace, unless status.createTag says otherwise.
	Tags []string `json:"tags,omitempty"`
	// VPCUUID is the VPC's UUID, or with several regions one per region as
	// region=uuid pairs separated by commas (see VPCIn).
	VPCUUID string `json:"vpcUUID,omitempty"`
	// TokenSecretRef names the Secret key that holds the DigitalOcean API token.
	TokenSecretRef SecretKeyRef `json:"tokenSecretRef,omitempty"`
	// Readiness is what must hold, beyond DigitalOcean's "active", before
	// the VM is reported running. It is never sent to DigitalOcean.
	Readiness Readiness `json:"readiness,omitempty"`
	// Pool marks a WarmPool's member, or, with ClaimedDropletID, the pool
	// a VM's droplet was taken from.
	Pool *PoolMembership `json:"pool,omitempty"`
	// ClaimedDropletID is the pool member's droplet a VM took: it is
	// adopted, never created.
	ClaimedDropletID int `json:"claimedDropletID,omitempty"`
	// AdoptedDropletID is a droplet this controller did not create (the
	// original alpha provisioner's) that the VM keeps: it is taken over by
	// its ID, never created or replaced, and deleted with the VM.
	AdoptedDropletID int `json:"adoptedDropletID,omitempty"`

	AlphaDropletSpec `json:",inline"`
}

// AlphaDropletSpec is what the original alpha provisioner kept in a
// Droplet's spec. Kept (unpruned) so that an upgrade loses nothing of its
// record; this controller only reads it. Deprecated: never set by this
// controller.
type AlphaDropletSpec struct {
	// Machine is the alpha's name of the VM; set only on the alpha's objects.
	Machine string `json:"machine,omitempty"`
	// Request is the alpha's create request (godo's DropletCreateRequest).
	Request *runtime.RawExtension `json:"droplet,omitempty"`
}

// Readiness is how the controller checks that a user's terminal will open.
type Readiness struct {
	// Check is ssh (log in with the VM's key; the default when empty),
	// cloud-init (also wait for cloud-init to finish) or none.
	Check string `json:"check,omitempty"`
	// Timeout bounds the wait from the droplet's creation; past it the VM
	// is reported as failed. Zero means the default.
	Timeout metav1.Duration `json:"timeout,omitempty"`
	// Address is which of the droplet's addresses is dialled: public (the
	// default when empty) or private. A VM's sshEndpoint annotation wins.
	Address string `json:"address,omitempty"`
	// Username is who the check logs in as when there is no VM to name
	// one (a pool member): the config's ssh_username.
	Username string `json:"username,omitempty"`
}

// Values of Readiness.Check and Readiness.Address.
const (
	ReadyCheckSSH       = "ssh"
	ReadyCheckCloudInit = "cloud-init"
	ReadyCheckNone      = "none"
	AddressPublic       = "public"
	AddressPrivate      = "private"
)

// SecretKeyRef points at one key of a Secret in the object's namespace.
type SecretKeyRef struct {
	Name string `json:"name,omitempty"`
	Key  string `json:"key,omitempty"`
}

// DropletStatus mirrors what DigitalOcean reports for the droplet.
type DropletStatus struct {
	// DropletID is DigitalOcean's ID; zero until the droplet exists.
	DropletID int `json:"dropletID,omitempty"`
	// Status is DigitalOcean's droplet status: new, active, off or archive.
	Status      string `json:"status,omitempty"`
	PublicIPv4  string `json:"publicIPv4,omitempty"`
	PrivateIPv4 string `json:"privateIPv4,omitempty"`
	PublicIPv6  string `json:"publicIPv6,omitempty"`
	// Region is the region the droplet was created in (of those spec.region
	// lists, the one that could take it).
	Region string `json:"region,omitempty"`
	// CreatedAt is when DigitalOcean created the droplet (RFC 3339).
	CreatedAt string `json:"createdAt,omitempty"`
	// PriceHourly and PriceMonthly are the US dollar prices of the droplet's
	// size as DigitalOcean reports them, e.g. "0.00893" and "6" (decimal
	// strings: CRD schemas avoid floats).
	PriceHourly  string `json:"priceHourly,omitempty"`
	PriceMonthly string `json:"priceMonthly,omitempty"`
	// CreateBatch is the BatchTag of the multi-create request this droplet
	// was sent in, recorded before it was sent; empty for a single create.
	CreateBatch string `json:"createBatch,omitempty"`
	// CreateTag is the VM's tag (hfdo-vm:) when a create sent alone carried
	// it, recorded before it was sent: another Droplet of the same name was
	// in the namespace then, and a name both droplets share cannot tell
	// them apart. Empty: what the create made is found by its name.
	CreateTag string `json:"createTag,omitempty"`
	// BootTag is the time-bucket tag the droplet was created with (see
	// digitalocean.BootTag), recorded before it was sent. While it boots,
	// it is read from the list of that tag: droplets created around the
	// same time, not the whole fleet.
	BootTag string `json:"bootTag,omitempty"`
	// NotCreated: DigitalOcean answered every create sent for this Droplet
	// with a refusal (401, 403 or 422), so it applied nothing and deleting
	// the Droplet needs no call to it. Cleared before any new create.
	NotCreated bool `json:"notCreated,omitempty"`
	// LastSynced is when the status was last read from DigitalOcean.
	LastSynced *metav1.Time                        `json:"lastSynced,omitempty"`
	Conditions []genericcondition.GenericCondition `json:"conditions,omitempty"`
	// State is what the droplet is doing, or what stops it: the reason of
	// its first failing condition, else its stage (Creating, Booting,
	// Active, Deleting). Derived from the rest of the status on every write.
	State string `json:"state,omitempty"`
	// Message says more about State.
	Message string `json:"message,omitempty"`
	// Claim, on a pool member, is the VM that took it. Set by one
	// conditional write, so two VMs never take the same member.
	Claim *ClaimRef `json:"claim,omitempty"`

	AlphaDropletStatus `json:",inline"`
}

// AlphaDropletStatus is what the alpha kept in a Droplet's status: the
// droplet as DigitalOcean returned it, its ID among it. Deprecated: read only.
type AlphaDropletStatus struct {
	Droplet *runtime.RawExtension `json:"droplet,omitempty"`
	Retries int                   `json:"retries,omitempty"`
}
