package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// WarmPoolLabel on a pool member (its Droplet, Key and Secret) names its WarmPool.
const WarmPoolLabel = "provisioning.hobbyfarm.io/warm-pool"

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// WarmPool keeps booted, reachable droplets for one template of one
// Environment, so that a new VM of that template takes one instead of
// waiting for a create and a boot. It is made from the Environment's
// warm_pool setting and controller-owned by the Environment.
type WarmPool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WarmPoolSpec   `json:"spec"`
	Status WarmPoolStatus `json:"status,omitempty"`
}

// WarmPoolSpec is what the pool is made of.
type WarmPoolSpec struct {
	Environment string `json:"environment"`
	Template    string `json:"template"`
	// WarmPool is the configured number of droplets to keep ready; unused
	// when Auto.
	WarmPool int `json:"warmPool"`
	// Auto sizes the pool from its recent arrivals and refill time (see
	// WarmPoolStatus.Auto), at most Max.
	Auto bool `json:"auto,omitempty"`
	Max  int  `json:"max,omitempty"`
	// Droplet is the request every member is created with; a member's
	// name, identity tag and key differ.
	Droplet DropletSpec `json:"droplet"`
	// RequestHash identifies Droplet (see RequestHash); a VM whose own
	// request has the same hash may take a member.
	RequestHash string `json:"requestHash"`
}

// WarmPoolStatus counts the pool's members.
type WarmPoolStatus struct {
	// Wanted is the current target: WarmPool (or, when Auto, Auto.Size)
	// while a scheduled event asking for the template runs (from its start
	// time minus the pool's lead until its end time), within the seats its
	// VMs left and count_capacity; else 0.
	Wanted int `json:"wanted"`
	// Message says why Wanted is what it is.
	Message string `json:"message,omitempty"`
	// Ready members are reachable and unclaimed.
	Ready int `json:"ready"`
	// Booting members are being created or checked.
	Booting int `json:"booting"`
	// Claims is how many members VMs have taken so far.
	Claims int `json:"claims"`
	// Auto is how an auto-sized pool chose its size; nil for a fixed size.
	Auto *WarmPoolAutoStatus `json:"auto,omitempty"`
	// ActiveEvents are the scheduled events the pool serves now.
	ActiveEvents []string `json:"activeEvents,omitempty"`
}

// WarmPoolAutoStatus is what an auto-sized pool's size was chosen from.
type WarmPoolAutoStatus struct {
	// Size is the size chosen, before the event's and capacity's caps.
	Size int `json:"size"`
	// Basis says why: start (no arrivals seen yet: Max), arrivals (the
	// arrivals expected within one refill, at 95% confidence), max (that,
	// capped at Max) or floor (too few arrivals: one is kept).
	Basis string `json:"basis"`
	// ArrivalsPerMinute is the recent arrival rate of the template's VMs.
	ArrivalsPerMinute float64 `json:"arrivalsPerMinute"`
	// RefillSeconds is the learned time from a member's create to claimable.
	RefillSeconds int `json:"refillSeconds"`
}

// PoolMembership marks a Droplet made for a WarmPool.
type PoolMembership struct {
	// Name is the WarmPool's.
	Name string `json:"name"`
	// RequestHash is the pool's when the member was made; a member of an
	// older hash is replaced, never claimed.
	RequestHash string `json:"requestHash"`
}

// ClaimRef records the VM that took a pool member.
type ClaimRef struct {
	VirtualMachine string      `json:"virtualMachine"`
	UID            string      `json:"uid"`
	At             metav1.Time `json:"at"`
}
