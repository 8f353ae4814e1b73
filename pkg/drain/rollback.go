package drain

import (
	"context"
	"fmt"
	"strings"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/sirupsen/logrus"
)

// releaseOnly releases this controller's hold on the namespace for a
// rollback to the original alpha provisioner: it removes our finalizers and
// deletes our Droplets, Keys and WarmPools, and deletes nothing in
// DigitalOcean. The alpha's Droplets, Keys and finalizers stay as they are:
// once back, the alpha finds its records and deletes each VM's droplet by ID
// when the VM goes. A taken-over droplet keeps this installation's tag,
// which costs nothing; the alpha's SSH keys retired at the takeover stay
// gone, which the alpha's key cleanup takes as done (it treats 404 so).
//
// It is refused, with nothing changed, while a Droplet of ours may hold a
// droplet this controller created: the alpha would know nothing of it and
// never delete it.
func releaseOnly(ctx context.Context, k kube, opts Options) (Report, error) {
	report := Report{ReleaseOnly: true}
	objs, err := readObjects(ctx, k, opts.Namespace)
	if err != nil {
		return report, err
	}
	if err := refuseCreated(objs); err != nil {
		return report, err
	}
	logRegisteredKeys(objs)
	report.Released, err = release(ctx, k, opts.Namespace, rollbackRules)
	return report, err
}

// refuseCreated fails, naming them, when Droplets of ours (a VM's, a warm
// pool member's) may hold a droplet that is not one the alpha's Droplets
// record.
func refuseCreated(o objects) error {
	alphaIDs := map[int]bool{}
	for _, d := range o.droplets {
		if alpha.IsDroplet(d) {
			alphaIDs[alpha.DropletOf(d).ID] = true
		}
	}
	delete(alphaIDs, 0)
	var held []string
	for _, d := range o.droplets {
		if alpha.IsDroplet(d) {
			continue
		}
		if id, ok := createdDroplet(d, alphaIDs); ok {
			what := "a droplet whose create was sent, its ID not recorded yet"
			if id != 0 {
				what = fmt.Sprintf("droplet %d", id)
			}
			held = append(held, fmt.Sprintf("%s (%s)", holderOf(d), what))
		}
	}
	if len(held) == 0 {
		return nil
	}
	return fmt.Errorf("refusing to release for a rollback: this controller created droplets that the original provisioner would never delete, held by %s; "+
		"with the controller running, delete those VMs and set warm_pool to 0 in the Environments of those pools, wait until their Droplets are gone, then run this again "+
		"(or uninstall with helm uninstall, which deletes every droplet)", strings.Join(held, ", "))
}

// createdDroplet is the droplet d may hold that this controller created,
// and whether there is one; id is 0 for a create sent whose answer is not
// recorded. An adopted droplet counts as created unless an alpha Droplet
// records it: the alpha deletes only what it recorded.
func createdDroplet(d *v1alpha1.Droplet, alphaIDs map[int]bool) (id int, ok bool) {
	recorded := false
	for _, id := range []int{d.Status.DropletID, d.Spec.ClaimedDropletID, d.Spec.AdoptedDropletID} {
		if id == 0 {
			continue
		}
		if !alphaIDs[id] {
			return id, true
		}
		recorded = true
	}
	return 0, !recorded && v1alpha1.MayExistInDigitalOcean(d) && !d.Status.NotCreated
}

// holderOf names what d's droplet is for.
func holderOf(d *v1alpha1.Droplet) string {
	switch {
	case d.Spec.VirtualMachine != "":
		return "VM " + d.Spec.VirtualMachine
	case d.Status.Claim != nil:
		return "VM " + d.Status.Claim.VirtualMachine
	case d.Spec.Pool != nil:
		return "warm pool " + d.Spec.Pool.Name
	}
	return "Droplet " + d.Name
}

// logRegisteredKeys names the SSH keys this controller registered that stay
// in DigitalOcean after a rollback (they cost nothing; an adopted key is the
// alpha's, and the alpha deletes it).
func logRegisteredKeys(o objects) {
	for _, k := range o.keys {
		retired := k.Status.KeyID == 0 && v1alpha1.Created.GetReason(k) == v1alpha1.ReasonRetired
		if alpha.IsKey(k) || k.Spec.AdoptedKeyID != 0 || retired || !mayHoldKey(k) {
			continue
		}
		log := logrus.WithField("key_object", k.Name).WithField("name", k.Spec.Name)
		if k.Status.KeyID != 0 {
			log = log.WithField("key", k.Status.KeyID)
		}
		log.Warn("an SSH key this controller registered may stay in DigitalOcean after the rollback (it costs nothing): delete it with doctl compute ssh-key delete once no droplet is being made with it")
	}
}
