package reliability

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io"
	"github.com/rancher/wrangler/v3/pkg/condition"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// warmPoolKey is the warm pool's config key.
const warmPoolKey = "warm_pool"

// poolEnv creates the "ubuntu" template and an Environment keeping size
// droplets of it warm, with extra merged into its specifics.
func (w *world) poolEnv(name string, size int, extra map[string]string) *hfv1.Environment {
	w.t.Helper()
	specifics := map[string]string{"region": "nyc1", "token-secret": tokenSecretName, warmPoolKey: strconv.Itoa(size)}
	for k, v := range extra {
		specifics[k] = v
	}
	return w.env(name, specifics)
}

// startEvent starts a running on-demand ScheduledEvent asking for VMs of
// env, with seats for every VM a test makes: what keeps env's pools up.
func (w *world) startEvent(name string, env *hfv1.Environment) {
	w.t.Helper()
	if _, err := w.hf.StartEvent(w.ns, name, map[string]map[string]int{env.Name: {"ubuntu": 1000}}); err != nil {
		w.t.Fatal(err)
	}
}

// endEvent ends the event, as Gargantua does at its end time.
func (w *world) endEvent(name string) {
	w.t.Helper()
	if _, err := w.hf.EndEvent(w.ns, name); err != nil {
		w.t.Fatal(err)
	}
}

// pools lists the namespace's WarmPools.
func (w *world) pools() ([]v1alpha1.WarmPool, error) {
	f, err := provisioning.NewFactoryFromConfig(w.cfg)
	if err != nil {
		return nil, err
	}
	list, err := f.Provisioning().V1alpha1().WarmPool().List(w.ns, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// members lists the pool members' Droplet objects (any pool).
func (w *world) members() ([]v1alpha1.Droplet, error) {
	sel, err := labels.Parse(v1alpha1.WarmPoolLabel)
	if err != nil {
		return nil, err
	}
	list, err := w.drops.List(w.ns, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// claimable reports a member a VM could take now.
func claimable(d *v1alpha1.Droplet) bool {
	return d.DeletionTimestamp == nil && d.Status.Claim == nil && d.Status.DropletID != 0 &&
		condition.Cond(v1alpha1.Ready).IsTrue(d) && condition.Cond(v1alpha1.Reachable).IsTrue(d)
}

// waitPoolReady waits until n members are claimable and the pool's status
// says so.
func (w *world) waitPoolReady(timeout time.Duration, n int) {
	w.t.Helper()
	w.eventually(timeout, fmt.Sprintf("%d pool members ready", n), func() string {
		ms, err := w.members()
		if err != nil {
			return err.Error()
		}
		ready := 0
		for i := range ms {
			if claimable(&ms[i]) {
				ready++
			}
		}
		pools, err := w.pools()
		if err != nil {
			return err.Error()
		}
		if len(pools) != 1 || pools[0].Status.Ready != n || ready != n {
			return fmt.Sprintf("%d claimable of %d members, pools: %s", ready, len(ms), poolsShown(pools))
		}
		return ""
	})
}

func poolsShown(pools []v1alpha1.WarmPool) string {
	var out []string
	for _, p := range pools {
		s := p.Status
		out = append(out, fmt.Sprintf("%s wanted=%d ready=%d booting=%d claims=%d", p.Name, s.Wanted, s.Ready, s.Booting, s.Claims))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, "; ")
}

// poolInvariants is "" when the world is as a warm pool requires at rest:
// every VM of vms runs with exactly one droplet in DigitalOcean, no droplet
// serves two VMs, and DigitalOcean holds exactly the VMs' droplets plus
// wanted unclaimed pool droplets, all ready. A droplet serves a VM when it
// carries the VM's tag (created for it) or the VM's Droplet holds its ID (a
// claimed one keeps the pool's tags).
func (w *world) poolInvariants(vms []string, wanted int) string {
	list, err := w.hf.VMs.List(w.ns, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	uids := map[string]string{}  // hfdo-vm tag -> VM name
	names := map[string]string{} // droplet name -> VM name
	for _, vm := range list.Items {
		if slices.Contains(vms, vm.Name) {
			if vm.Status.Status != hfv1.VmStatusRunning || vm.Status.PublicIP == "" {
				return fmt.Sprintf("VM %s is %q", vm.Name, vm.Status.Status)
			}
			uids[digitalocean.VMTag(string(vm.UID))] = vm.Name
			names[digitalocean.DropletName(vm.Name)] = vm.Name
		}
	}
	if len(uids) != len(vms) {
		return fmt.Sprintf("%d of %d VMs exist", len(uids), len(vms))
	}
	recorded := map[int]string{} // droplet ID -> the VM whose Droplet holds it
	for _, name := range vms {
		d, err := w.drops.Get(w.ns, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Sprintf("VM %s's Droplet: %v", name, err)
		}
		for _, id := range []int{d.Status.DropletID, d.Spec.ClaimedDropletID} {
			if id != 0 {
				recorded[id] = name
			}
		}
	}
	perVMName := map[string][]int{}
	for _, d := range w.liveDroplets() {
		var owners []string
		for _, tag := range d.tags {
			if name, ok := uids[tag]; ok {
				owners = append(owners, name)
			}
		}
		for _, name := range []string{recorded[d.id], names[d.name]} {
			if name != "" && !slices.Contains(owners, name) {
				owners = append(owners, name)
			}
		}
		if len(owners) > 1 {
			return fmt.Sprintf("droplet %d serves VMs %v", d.id, owners)
		}
		for _, o := range owners {
			perVMName[o] = append(perVMName[o], d.id)
		}
	}
	for _, name := range vms {
		if ids := perVMName[name]; len(ids) != 1 {
			return fmt.Sprintf("VM %s has droplets %v in DigitalOcean, want exactly one", name, ids)
		}
	}
	if live := len(w.liveDroplets()); live != len(vms)+wanted {
		return fmt.Sprintf("DigitalOcean holds %d droplets, want %d VMs + %d pool", live, len(vms), wanted)
	}
	ms, err := w.members()
	if err != nil {
		return err.Error()
	}
	ready := 0
	for i := range ms {
		if claimable(&ms[i]) {
			ready++
		}
	}
	if ready != wanted || len(ms) != wanted {
		return fmt.Sprintf("%d pool members, %d of them ready, want %d and %d", len(ms), ready, wanted, wanted)
	}
	return ""
}

// claimed reports whether the VM's Droplet took a pool member's droplet.
func (w *world) claimed(vm string) bool {
	d, err := w.drops.Get(w.ns, vm, metav1.GetOptions{})
	return err == nil && d.Spec.ClaimedDropletID != 0
}

// claims is how many VMs of names have a Droplet that took a pool droplet.
func (w *world) claims(names []string) int {
	list, err := w.drops.List(w.ns, metav1.ListOptions{})
	if err != nil {
		return 0
	}
	c := 0
	for _, d := range list.Items {
		if slices.Contains(names, d.Spec.VirtualMachine) && d.Spec.ClaimedDropletID != 0 {
			c++
		}
	}
	return c
}

// drainAndDeleteAll ends the event and deletes the VMs, and waits until
// nothing is left in DigitalOcean or the namespace.
func (w *world) drainAndDeleteAll(event string, vms []string, timeout time.Duration) {
	w.t.Helper()
	w.endEvent(event)
	w.deleteVMs(vms...)
	w.waitAllGone(timeout)
}
