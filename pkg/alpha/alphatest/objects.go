package alphatest

import (
	"encoding/json"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The JSON of the alpha's Go types, as its clients sent them. Its status
// fields have no omitempty: a Key or Droplet status always carries
// "conditions" and "retries" (null until set) and the raw DigitalOcean
// object (null until created).

// object is one of the alpha's objects: a Secret (Data) or a Key or
// Droplet (Spec and Status).
type object struct {
	APIVersion string            `json:"apiVersion,omitempty"`
	Kind       string            `json:"kind,omitempty"`
	Metadata   objectMeta        `json:"metadata"`
	Data       map[string][]byte `json:"data,omitempty"`
	Spec       any               `json:"spec,omitempty"`
	Status     any               `json:"status,omitempty"`
}

// objectMeta is what the alpha set of an object's metadata (with baaah's
// additions) before creating it. A zero creation time is written as null.
type objectMeta struct {
	Name              string                  `json:"name,omitempty"`
	Namespace         string                  `json:"namespace,omitempty"`
	CreationTimestamp *string                 `json:"creationTimestamp"`
	Labels            map[string]string       `json:"labels,omitempty"`
	Annotations       map[string]string       `json:"annotations,omitempty"`
	OwnerReferences   []metav1.OwnerReference `json:"ownerReferences,omitempty"`
}

type keySpec struct {
	Machine string          `json:"machine"`
	Secret  string          `json:"secret"`
	Key     json.RawMessage `json:"key"` // keyCreateRequest
}

type keyStatus struct {
	Key        json.RawMessage `json:"key"` // doKey
	Conditions []condition     `json:"conditions"`
	Retries    []retryRecord   `json:"retries"`
}

type dropletSpec struct {
	Machine string          `json:"machine"`
	Droplet json.RawMessage `json:"droplet"` // dropletCreateRequest
}

type dropletStatus struct {
	Droplet    json.RawMessage `json:"droplet"` // doDroplet
	Conditions []condition     `json:"conditions"`
	Retries    []retryRecord   `json:"retries"`
}

// condition is wrangler's GenericCondition. The alpha wrote statuses in
// lower case ("true", "unknown"); every change of status stamps
// lastUpdateTime, and lastTransitionTime is never set.
type condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	LastUpdateTime     string `json:"lastUpdateTime,omitempty"`
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
	Reason             string `json:"reason,omitempty"`
	Message            string `json:"message,omitempty"`
}

// retryRecord is the alpha's GenericRetry. It recorded retries only of deletes,
// which a provisioned VM has not had: its retries stay null.
type retryRecord struct {
	Action            string `json:"action"`
	MaxRetries        int    `json:"maxRetries"`
	Attempts          int    `json:"attempts"`
	LastAttemptTime   string `json:"lastAttemptTime"`
	LastAttemptResult struct {
		Success bool   `json:"success"`
		Message string `json:"message"`
	} `json:"lastAttemptResult"`
}

// The alpha's condition types.
const (
	condDropletExists = "DigitaloceanDropletExists"
	condDropletReady  = "DigitaloceanDropletReady"
	condKeyCreated    = "DigitaloceanKeyCreated"
)

// now is how wrangler stamps a condition.
func now() string { return time.Now().UTC().Format(time.RFC3339) }

// keyConditions: Key status once its DigitalOcean key exists. (KeyExists
// is only ever written when no DigitalOcean client can be made.)
func keyConditions() []condition {
	return []condition{{Type: condKeyCreated, Status: "true", LastUpdateTime: now()}}
}

// dropletConditions: Droplet status once its droplet exists. Nothing in
// the alpha ever sets Ready beyond "unknown"; Updated is only written on
// an error.
func dropletConditions(readyStamped, createdStamped string) []condition {
	return []condition{
		{Type: condDropletExists, Status: "true", LastUpdateTime: createdStamped, Reason: "droplet created"},
		{Type: condDropletReady, Status: "unknown", LastUpdateTime: readyStamped},
	}
}

// typedKey is a Key as the alpha's Go type held it: every spec and status
// field present (null when unset), the rest of the object as read.
type typedKey struct {
	Metadata map[string]any `json:"metadata"`
	Spec     keySpec        `json:"spec"`
	Status   keyStatus      `json:"status"`
}

// keyAsTyped reads a Key object as the alpha's cache handed it to a
// handler (without kind and apiVersion).
func keyAsTyped(obj map[string]any) (*typedKey, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	k := &typedKey{}
	return k, json.Unmarshal(b, k)
}

func rawJSON(v any) (json.RawMessage, error) {
	return json.Marshal(v)
}
