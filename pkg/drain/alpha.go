package drain

import (
	"fmt"
	"maps"
	"slices"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha"
	"github.com/sirupsen/logrus"
)

// alphaRecords are the droplets and SSH keys that the original alpha
// provisioner's Droplet and Key objects of the namespace record, by ID, with
// the VM of each. The drain deletes them by those IDs: the alpha tagged
// nothing, and its names are the same for a VM of the same name in another
// namespace on the same token. A taken-over droplet also carries the
// installation's tag; one whose VM went, or that was not taken over yet,
// carries none and is found by its ID only.
type alphaRecords struct {
	droplets map[int]string // droplet ID -> VM
	keys     map[int]string // SSH key ID -> VM
}

func alphaRecordsOf(o objects) alphaRecords {
	r := alphaRecords{droplets: map[int]string{}, keys: map[int]string{}}
	for _, d := range o.droplets {
		if id := alpha.DropletOf(d).ID; alpha.IsDroplet(d) && id != 0 {
			r.droplets[id] = d.Spec.Machine
		}
	}
	for _, k := range o.keys {
		if id := alpha.KeyOf(k).ID; alpha.IsKey(k) && id != 0 {
			r.keys[id] = k.Spec.Machine
		}
	}
	return r
}

// needToken fails when the alpha recorded something and no token can be
// read to delete it with: its droplet would keep billing.
func (r alphaRecords) needToken() error {
	const noToken = "no DigitalOcean token of this installation can be read (its Environments' token or token-secret, its Droplets' and Keys' token Secrets)"
	if ids := slices.Sorted(maps.Keys(r.droplets)); len(ids) > 0 {
		return fmt.Errorf("the original provisioner's Droplet of VM %s records droplet %d and %s", r.droplets[ids[0]], ids[0], noToken)
	}
	if ids := slices.Sorted(maps.Keys(r.keys)); len(ids) > 0 {
		return fmt.Errorf("the original provisioner's Key of VM %s records SSH key %d and %s", r.keys[ids[0]], ids[0], noToken)
	}
	return nil
}

// logUnfound says which records no account of the installation's tokens
// holds: DigitalOcean answers the same for one that is gone and for one
// under a token the installation no longer names.
func (r alphaRecords) logUnfound(droplets, keys map[int]bool) {
	for _, id := range slices.Sorted(maps.Keys(r.droplets)) {
		if !droplets[id] {
			logrus.WithField("vm", r.droplets[id]).WithField("droplet", id).
				Warn("the original provisioner's droplet is in none of the installation's DigitalOcean accounts: deleted already, or under a token no Environment names any more")
		}
	}
	for _, id := range slices.Sorted(maps.Keys(r.keys)) {
		if !keys[id] {
			// The usual case: a taken-over VM's key is retired once its droplet is adopted.
			logrus.WithField("vm", r.keys[id]).WithField("key", id).
				Debug("the original provisioner's SSH key is in none of the installation's DigitalOcean accounts: retired or deleted already")
		}
	}
}
