package v1alpha1

import (
	"github.com/rancher/wrangler/v3/pkg/genericcondition"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
}
