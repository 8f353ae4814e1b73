package alpha

import (
	"encoding/json"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
)

// IsDroplet reports a Droplet object the alpha made (it names its VM in
// spec.machine; this controller's never set it).
func IsDroplet(d *v1alpha1.Droplet) bool { return d != nil && d.Spec.Machine != "" }

// IsKey reports a Key object the alpha made.
func IsKey(k *v1alpha1.Key) bool { return k != nil && k.Spec.Machine != "" }

// Droplet is what the alpha recorded of a droplet: its status.droplet (as
// DigitalOcean returned it), else its create request.
type Droplet struct {
	ID     int
	Name   string
	Region string
	Size   string
	Image  string
}

// DropletOf reads d's record; ID is 0 when the alpha recorded none (its
// create never answered).
func DropletOf(d *v1alpha1.Droplet) Droplet {
	var status struct {
		ID     int    `json:"id"`
		Name   string `json:"name"`
		Region struct {
			Slug string `json:"slug"`
		} `json:"region"`
		SizeSlug string `json:"size_slug"`
		Image    struct {
			Slug string `json:"slug"`
		} `json:"image"`
	}
	// godo's create request: the image as its slug.
	var request struct {
		Name   string `json:"name"`
		Region string `json:"region"`
		Size   string `json:"size"`
		Image  string `json:"image"`
	}
	decode(d.Status.Droplet, &status)
	decode(d.Spec.Request, &request)
	return Droplet{ID: status.ID, Name: first(status.Name, request.Name),
		Region: first(status.Region.Slug, request.Region), Size: first(status.SizeSlug, request.Size),
		Image: first(status.Image.Slug, request.Image)}
}

// Key is what the alpha recorded of a DigitalOcean key.
type Key struct {
	ID          int
	Name        string
	Fingerprint string
	// PublicKey is the key the alpha registered (its create request's).
	PublicKey string
}

// KeyOf reads k's record; ID is 0 when the alpha recorded none.
func KeyOf(k *v1alpha1.Key) Key {
	var status struct {
		ID          int    `json:"id"`
		Name        string `json:"name"`
		Fingerprint string `json:"fingerprint"`
		PublicKey   string `json:"public_key"`
	}
	var request struct {
		Name      string `json:"name"`
		PublicKey string `json:"public_key"`
	}
	decode(k.Status.Key, &status)
	decode(k.Spec.Request, &request)
	return Key{ID: status.ID, Name: first(status.Name, request.Name), Fingerprint: status.Fingerprint,
		PublicKey: first(status.PublicKey, request.PublicKey)}
}

func decode(raw *runtime.RawExtension, into any) {
	if raw != nil && len(raw.Raw) > 0 {
		// A field of another shape reads as empty; the others still read.
		_ = json.Unmarshal(raw.Raw, into)
	}
}

func first(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
