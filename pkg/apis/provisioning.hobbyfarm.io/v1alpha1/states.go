package v1alpha1

// Stages of a Droplet that nothing stops, shown as its state (status.state,
// the STATE column); a failing condition shows its reason instead.
const (
	DropletStateCreating = "Creating"
	DropletStateBooting  = "Booting"
	DropletStateActive   = "Active"
)

// Stages of a Key that nothing stops, shown as its state.
const (
	KeyStateCreating = "Creating"
	KeyStateActive   = "Active"
	// KeyStateRetired: deleted in DigitalOcean once its droplet existed.
	KeyStateRetired = ReasonRetired
)

// Reasons one controller sets and another acts on.
const (
	// ReasonCreating: a Droplet's create is on record and about to be sent.
	ReasonCreating = "Creating"
	// ReasonNextRegion: a Droplet's create was refused as sold out in one
	// listed region and goes to the next at once; nothing was made.
	ReasonNextRegion = "TryingNextRegion"
	// ReasonSoldOut: every region a Droplet lists is sold out of its size;
	// no create is sent until the first is tried again.
	ReasonSoldOut = "SoldOut"
	// ReasonClaimedFromPool: a VM's droplet was taken from a warm pool, not
	// created.
	ReasonClaimedFromPool = "ClaimedFromPool"
	// ReasonClaimedDropletGone: the taken droplet no longer exists; none is
	// created in its place.
	ReasonClaimedDropletGone = "ClaimedDropletGone"
	// ReasonReadyTimeout: a droplet was not reachable within ready_timeout
	// of its create (Reachable).
	ReasonReadyTimeout = "ReadyTimeout"
	// ReasonNotChecked: ready_check is none, so Reachable is True unchecked.
	ReasonNotChecked = "NotChecked"
	// ReasonRetired: a Key's SSH key was deleted in DigitalOcean once its
	// droplet existed; the key pair stays in the VM's Secret (Created).
	ReasonRetired = "Retired"
)

// IsPoolMember: d is a droplet a WarmPool keeps for VMs to take, with no VM
// of its own (a VM's Droplet taken from a pool records the pool too).
func (d *Droplet) IsPoolMember() bool {
	return d.Spec.Pool != nil && d.Spec.VirtualMachine == ""
}

// IsRetired: k's SSH key was deleted in DigitalOcean once its droplet
// existed (ReasonRetired), and it has not been registered again since.
func (k *Key) IsRetired() bool {
	return k.Status.KeyID == 0 && Created.GetReason(k) == ReasonRetired
}
