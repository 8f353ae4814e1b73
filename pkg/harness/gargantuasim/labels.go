package gargantuasim

// Labels, annotation and finalizer Gargantua writes or reads, as in its source.
const (
	// ProvisionerKey is both the Environment annotation naming a third-party
	// provisioner and the VM label Gargantua copies it to.
	ProvisionerKey = "hobbyfarm.io/provisioner"
	// VMSetFinalizer is the finalizer Gargantua puts on every VM of a VM set.
	VMSetFinalizer = "finalizer.hobbyfarm.io/vmset"

	environmentLabel = "hobbyfarm.io/environment"
	templateLabel    = "hobbyfarm.io/virtualmachinetemplate"
	eventLabel       = "hobbyfarm.io/scheduledevent"
	sessionLabel     = "hobbyfarm.io/session"
	userLabel        = "hobbyfarm.io/user"
	vmsetLabel       = "vmset"
	claimLabel       = "vmc"
	boundLabel       = "bound"
	restrictedLabel  = "restrictedbind"
)

// templateMarker is the label Gargantua puts on claims and VM sets for each
// template they hold, so it can select them by template.
func templateMarker(template string) string {
	return "virtualmachinetemplate.hobbyfarm.io/" + template
}
