package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
)

func TestReadinessDefaults(t *testing.T) {
	d, err := Parse(valid(), "here")
	if err != nil {
		t.Fatal(err)
	}
	r := d.Readiness
	if r.Check != v1alpha1.ReadyCheckSSH || r.Address != v1alpha1.AddressPublic || r.Timeout.Duration != DefaultReadyTimeout {
		t.Errorf("defaults = %+v, want ssh, public, %s", r, DefaultReadyTimeout)
	}
	if r.Username != DefaultSSHUsername {
		t.Errorf("username = %q, want %q", r.Username, DefaultSSHUsername)
	}
}

// A pool member's check has no VM to name the user: ssh_username is in the spec.
func TestReadinessUsernameIsSSHUsername(t *testing.T) {
	s := valid()
	s[KeySSHUsername] = "ubuntu"
	d, err := Parse(s, "here")
	if err != nil {
		t.Fatal(err)
	}
	if d.Readiness.Username != "ubuntu" {
		t.Errorf("readiness username = %q, want ubuntu", d.Readiness.Username)
	}
}

func TestReadinessSettings(t *testing.T) {
	s := valid()
	s[KeyReadyCheck], s[KeyReadyTimeout], s[KeySSHAddress] = "cloud-init", "90s", "private"
	d, err := Parse(s, "here")
	if err != nil {
		t.Fatal(err)
	}
	r := d.Readiness
	if r.Check != v1alpha1.ReadyCheckCloudInit || r.Address != v1alpha1.AddressPrivate || r.Timeout.Duration != 90*time.Second {
		t.Errorf("parsed %+v", r)
	}
}

func TestReadinessErrorsNameTheKeyAndTheFix(t *testing.T) {
	for _, c := range []struct{ key, value, fix string }{
		{KeyReadyCheck, "ping", `"cloud-init"`},
		{KeyReadyTimeout, "ten minutes", `"10m"`},
		{KeyReadyTimeout, "0s", `"10m"`},
		{KeyReadyTimeout, "48h", `"10m"`},
		{KeySSHAddress, "vpc", `"private"`},
	} {
		s := valid()
		s[c.key] = c.value
		_, err := Parse(s, "here")
		var cfgErr *Error
		if !errors.As(err, &cfgErr) || cfgErr.Key != c.key || !strings.Contains(err.Error(), c.value) || !strings.Contains(cfgErr.Fix, c.fix) {
			t.Errorf("%s=%q: got %v, want an error naming the key, the value and the fix %s", c.key, c.value, err, c.fix)
		}
	}
}
