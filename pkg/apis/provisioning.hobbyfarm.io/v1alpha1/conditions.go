package v1alpha1

import "github.com/rancher/wrangler/v3/pkg/condition"

const (
	// Configured is owned by the VirtualMachine controller: the VM's merged
	// Environment config is complete and valid. The Droplet controller only
	// records it True when it is unset (events.MarkConfigValid).
	Configured condition.Cond = "Configured"
	// Created means the object exists in DigitalOcean.
	Created condition.Cond = "Created"
	// Ready means the droplet is active with an address, or the key is usable.
	Ready condition.Cond = "Ready"
	// Deleting is set while the object is removed from DigitalOcean.
	Deleting condition.Cond = "Deleting"
	// KeyPair is owned by the VirtualMachine controller, on the Droplet: the
	// VM's key-pair Secret holds the key its droplet accepts. It is only set
	// once that went wrong (False, e.g. KeySecretLost), and again when it is
	// put right (True, Restored).
	KeyPair condition.Cond = "KeyPair"
	// Reachable means the VM's user can log in: the controller logged in to
	// the active droplet as Gargantua's shell will (and, with ready_check
	// cloud-init, cloud-init finished). Its message holds the last error.
	Reachable condition.Cond = "Reachable"
)

// Configured's verdict on a complete and valid config.
const (
	ReasonConfigValid  = "Valid"
	MessageConfigValid = "DigitalOcean settings are complete and valid"
)
