package v1alpha1

import (
	"github.com/rancher/wrangler/v3/pkg/genericcondition"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Key is one SSH key registered with DigitalOcean, whose key pair lives in a Secret.
type Key struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KeySpec   `json:"spec"`
	Status KeyStatus `json:"status,omitempty"`
}

// KeySpec is the key create request sent to DigitalOcean.
type KeySpec struct {
	// Name is the key's name in DigitalOcean.
	Name string `json:"name"`
	// PublicKeySecretRef names the Secret key holding the authorized_keys line.
	PublicKeySecretRef SecretKeyRef `json:"publicKeySecretRef"`
	// TokenSecretRef names the Secret key that holds the DigitalOcean API token.
	TokenSecretRef SecretKeyRef `json:"tokenSecretRef,omitempty"`
	// AdoptedKeyID is a DigitalOcean key this controller did not create (the
	// original alpha provisioner's) that the VM's droplet was made with: it
	// is taken over by its ID, never created, and deleted with the VM.
	AdoptedKeyID int `json:"adoptedKeyID,omitempty"`

	AlphaKeySpec `json:",inline"`
}

// AlphaKeySpec is what the original alpha provisioner kept in a Key's spec.
// Deprecated: read only, kept unpruned so that an upgrade loses nothing.
type AlphaKeySpec struct {
	// Machine is the alpha's name of the VM; set only on the alpha's objects.
	Machine string `json:"machine,omitempty"`
	// Secret is the alpha's key-pair Secret.
	Secret string `json:"secret,omitempty"`
	// Request is the alpha's create request (godo's KeyCreateRequest).
	Request *runtime.RawExtension `json:"key,omitempty"`
}

// KeyStatus mirrors what DigitalOcean reports for the key.
type KeyStatus struct {
	// KeyID is DigitalOcean's ID; zero until the key exists.
	KeyID       int    `json:"keyID,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
	// NotCreated: DigitalOcean has nothing of this Key: nothing was sent
	// that could have registered it, or every create was refused (401, 403
	// or 422). Deleting the Key then needs no call to DigitalOcean.
	NotCreated bool                                `json:"notCreated,omitempty"`
	Conditions []genericcondition.GenericCondition `json:"conditions,omitempty"`
	// State is the reason of the key's first failing condition, else its
	// stage (Creating, Active, Deleting). Derived on every status write.
	State string `json:"state,omitempty"`
	// Message says more about State.
	Message string `json:"message,omitempty"`

	AlphaKeyStatus `json:",inline"`
}

// AlphaKeyStatus is what the alpha kept in a Key's status: the key as
// DigitalOcean returned it, its ID among it. Deprecated: read only.
type AlphaKeyStatus struct {
	Key     *runtime.RawExtension `json:"key,omitempty"`
	Retries int                   `json:"retries,omitempty"`
}
