package v1alpha1

// Labels and annotations of Gargantua's that the controllers read or set.
const (
	// ScheduledEventLabel on a VM names its scheduled event (Gargantua sets
	// it on claim and VM set VMs); the VM's Droplet carries it too.
	ScheduledEventLabel = "hobbyfarm.io/scheduledevent"
	// EnvironmentLabel names an Environment: Gargantua's VM set puts it on
	// its VMs, and ours on an Environment's shared Key and WarmPools.
	EnvironmentLabel = "hobbyfarm.io/environment"
	// Gargantua's cost labels. Its cost service (v3.3 services/costsvc)
	// counts every object of its tracked resources that has all three:
	// cost-base-price a float, cost-time-unit seconds, minutes or hours.
	CostGroupLabel     = "hobbyfarm.io/cost-group"
	CostBasePriceLabel = "hobbyfarm.io/cost-base-price"
	CostTimeUnitLabel  = "hobbyfarm.io/cost-time-unit"
	// SSHEndpointAnnotation on a VM is the host Gargantua's shell dials
	// instead of the VM's public IP.
	SSHEndpointAnnotation = "sshEndpoint"
)
