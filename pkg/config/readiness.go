package config

import (
	"fmt"
	"strings"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// parseReadiness reads ready_check, ready_timeout and ssh_address, filling
// in their defaults so that a Droplet records what was in force.
func parseReadiness(settings map[string]string) (v1alpha1.Readiness, error) {
	r := v1alpha1.Readiness{Check: v1alpha1.ReadyCheckSSH, Address: v1alpha1.AddressPublic,
		Timeout: metav1.Duration{Duration: DefaultReadyTimeout}}
	switch v := strings.TrimSpace(settings[KeyReadyCheck]); v {
	case "":
	case v1alpha1.ReadyCheckSSH, v1alpha1.ReadyCheckCloudInit, v1alpha1.ReadyCheckNone:
		r.Check = v
	default:
		return r, &Error{Key: KeyReadyCheck, Problem: fmt.Sprintf("%s is not a ready check", shown(v)),
			Fix: `set it to "ssh" (log in with the VM's key, the default), "cloud-init" (also wait for cloud-init to finish) or "none" (running as soon as DigitalOcean says active)`}
	}
	if v := strings.TrimSpace(settings[KeyReadyTimeout]); v != "" {
		timeout, err := time.ParseDuration(v)
		if err != nil || timeout < time.Second || timeout > MaxReadyTimeout {
			return r, &Error{Key: KeyReadyTimeout, Problem: fmt.Sprintf("%s is not a duration between 1s and %s", shown(v), MaxReadyTimeout),
				Fix: fmt.Sprintf(`set it to a Go duration such as "10m" or "90s" (the default is %s)`, DefaultReadyTimeout)}
		}
		r.Timeout.Duration = timeout
	}
	switch v := strings.TrimSpace(settings[KeySSHAddress]); v {
	case "":
	case v1alpha1.AddressPublic, v1alpha1.AddressPrivate:
		r.Address = v
	default:
		return r, &Error{Key: KeySSHAddress, Problem: fmt.Sprintf("%s is not a droplet address", shown(v)),
			Fix: `set it to "public" (the default) or "private" (when this cluster reaches droplets on their VPC address)`}
	}
	return r, nil
}
