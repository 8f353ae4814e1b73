package digitalocean

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
)

// RequestHash identifies what a droplet is made from: everything in its
// create request but its name, the tags naming its VM, batch or pool, and
// its key (each pool member has its own). tokenHash names the account;
// keyScope is the shared Key's name under ssh_key_scope environment, else
// config.KeyScopeVM. A VM may take a warm pool's member only when both
// hashes are equal.
func RequestHash(spec v1alpha1.DropletSpec, keyScope, tokenHash string) string {
	var tags []string
	for _, t := range spec.Tags {
		if !IsReservedTag(t) {
			tags = append(tags, t)
		}
	}
	slices.Sort(tags)
	identity := struct {
		Region, Size, Image, UserData, VPCUUID       string
		Backups, IPv6, Monitoring, PrivateNetworking bool
		Tags                                         []string
		Readiness                                    v1alpha1.Readiness
		KeyScope, Token                              string
	}{spec.Region, spec.Size, spec.Image, spec.UserData, spec.VPCUUID,
		spec.Backups, spec.IPv6, spec.Monitoring, spec.PrivateNetworking,
		tags, spec.Readiness, keyScope, tokenHash}
	data, _ := json.Marshal(identity)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}
