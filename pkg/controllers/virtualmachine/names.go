package virtualmachine

import (
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// HandlerName is part of the API, as its cleanup handler's name
// (finalizer.VMCleanupHandler) is. Never rename it.
const HandlerName = "hf-provisioner-digitalocean-vm"

const (
	// ProvisionerLabel is copied by Gargantua from the Environment's annotation.
	ProvisionerLabel = "hobbyfarm.io/provisioner"
	// ProvisionerName is this provisioner's value of that label.
	ProvisionerName = "digitalocean"
	// readyLabel is what Gargantua's own provisioner sets once a VM is up.
	readyLabel = "ready"
)

// Eligible reports whether the controller may act on vm at all. Before
// Gargantua has written the VM's status (environment_id), any write to the VM
// would make Gargantua's own status write conflict and taint the session.
func Eligible(vm *hfv1.VirtualMachine) bool {
	return vm != nil && vm.Labels[ProvisionerLabel] == ProvisionerName && vm.Status.EnvironmentId != ""
}

// SSHSecretName is the Secret holding the VM's key pair; VM.spec.secret_name points at it.
func SSHSecretName(vm *hfv1.VirtualMachine) string { return vm.Name + sshSecretSuffix }

const sshSecretSuffix = "-ssh"

// secretNameFor is what VM.spec.secret_name points at: the VM's own key
// pair, or its Environment's shared one.
func secretNameFor(vm *hfv1.VirtualMachine, shared bool) string {
	if shared {
		return SharedKeyName(vm.Status.EnvironmentId)
	}
	return SSHSecretName(vm)
}

// TokenSecretName holds the token when the Environment has it in plain text.
func TokenSecretName(vm *hfv1.VirtualMachine) string { return vm.Name + "-do-token" }

var everything = labels.Everything()
