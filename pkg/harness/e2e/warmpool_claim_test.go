package e2e

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/virtualmachine"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshkey"
	"golang.org/x/crypto/ssh"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// poolWorld is an Environment keeping size "ubuntu" droplets warm while
// the scheduled event "ev" is active.
func poolWorld(t *testing.T, o worldOptions, size int, active bool, extra ...string) (*world, *hfv1.Environment) {
	w := newWorld(t, o)
	w.standardEnv("plain") // creates the templates
	env := w.createEnv(gargantuasim.Environment(w.ns, "pooled",
		with(map[string]string{"region": "nyc1", "token-secret": tokenSecret, "warm_pool": strconv.Itoa(size)}, extra...),
		map[string]map[string]string{"ubuntu": {"size": "s-1vcpu-1gb"}}))
	if active {
		w.setEvent("ev", env, true)
	}
	return w, env
}

// setEvent creates or updates a scheduled event using env, running (from
// an hour ago for a day, with seats for every VM a test makes) or finished.
func (w *world) setEvent(name string, env *hfv1.Environment, active bool) {
	w.t.Helper()
	f, err := hobbyfarm.NewFactoryFromConfig(testenv.Require(w.t).Config())
	if err != nil {
		w.t.Fatal(err)
	}
	events := f.Hobbyfarm().V1().ScheduledEvent()
	ev, err := events.Get(w.ns, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		ev, err = events.Create(&hfv1.ScheduledEvent{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
			Spec: hfv1.ScheduledEventSpec{Name: name, OnDemand: true,
				StartTime: gargantuasim.EventTime(time.Now().Add(-time.Hour)), EndTime: gargantuasim.EventTime(time.Now().Add(24 * time.Hour)),
				RequiredVirtualMachines: map[string]map[string]int{env.Name: {"ubuntu": 100}}}})
	}
	if err != nil {
		w.t.Fatal(err)
	}
	ev.Status.Active, ev.Status.Finished = active, !active
	if _, err := events.UpdateStatus(ev); err != nil {
		w.t.Fatal(err)
	}
}

// poolMembers are the namespace's warm pool members, by name.
func (w *world) poolMembers() map[string]*v1alpha1.Droplet {
	w.t.Helper()
	list, err := w.droplets.List(w.ns, metav1.ListOptions{LabelSelector: v1alpha1.WarmPoolLabel})
	if err != nil {
		w.t.Fatal(err)
	}
	out := map[string]*v1alpha1.Droplet{}
	for i := range list.Items {
		if d := &list.Items[i]; d.IsPoolMember() {
			out[d.Name] = d
		}
	}
	return out
}

// waitPoolReady waits for n claimable members and returns their droplet IDs.
func (w *world) waitPoolReady(n int) map[int]string {
	w.t.Helper()
	ids := map[int]string{}
	w.eventually(90*time.Second, fmt.Sprintf("%d ready pool members", n), func() string {
		clear(ids)
		for _, d := range w.poolMembers() {
			if claimableMember(d) {
				ids[d.Status.DropletID] = d.Name
			}
		}
		if len(ids) < n {
			return fmt.Sprintf("%d ready", len(ids))
		}
		return ""
	})
	return ids
}

// claimableMember: a VM could take d now.
func claimableMember(d *v1alpha1.Droplet) bool {
	return d.Status.Claim == nil && d.DeletionTimestamp == nil && v1alpha1.Ready.IsTrue(d) && v1alpha1.Reachable.IsTrue(d)
}

// fakeDroplet is droplet id as the fake DigitalOcean holds it, if live.
func (w *world) fakeDroplet(id int) (godo.Droplet, bool) {
	for _, d := range w.do.Droplets(testToken) {
		if d.ID == id {
			return d, true
		}
	}
	return godo.Droplet{}, false
}

// TestVMTakesAReadyPoolDroplet: a VM arriving while its pool has a ready
// droplet runs on it without a create: the VM's Droplet records it (the
// droplet keeps the pool's tags in DigitalOcean), the VM's Secret holds the
// key it accepts, the pool member is released without deleting the
// droplet, and deleting the VM deletes it.
func TestVMTakesAReadyPoolDroplet(t *testing.T) {
	w, env := poolWorld(t, worldOptions{}, 1, true)
	members := w.waitPoolReady(1)
	var poolID int
	var member string
	for poolID, member = range members {
	}

	w.createVM("taker", env, "ubuntu")
	w.waitRunning("taker")
	d := w.droplet("taker")
	if d.Status.DropletID != poolID || d.Spec.ClaimedDropletID != poolID {
		t.Fatalf("the VM runs on droplet %d (claimed %d), want the pool's droplet %d", d.Status.DropletID, d.Spec.ClaimedDropletID, poolID)
	}
	if reason := v1alpha1.Created.GetReason(d); reason != v1alpha1.ReasonClaimedFromPool {
		t.Errorf("Created reason %q, want %s", reason, v1alpha1.ReasonClaimedFromPool)
	}
	if !hasEvent(w.vmEvents("taker"), "Normal "+v1alpha1.ReasonClaimedFromPool+": took droplet "+strconv.Itoa(poolID)) {
		t.Errorf("no ClaimedFromPool Event on the VM naming droplet %d: %v", poolID, w.vmEvents("taker"))
	}
	if _, err := w.keys.Get(w.ns, "taker", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the VM has a Key of its own (%v); a pool droplet accepts the member's key only", err)
	}
	vm := w.vm("taker")
	got, ok := w.fakeDroplet(poolID)
	if !ok || slices.Contains(got.Tags, digitalocean.VMTag(string(vm.UID))) || !slices.ContainsFunc(got.Tags, isPoolTag) {
		t.Errorf("droplet %d in DigitalOcean has tags %v, want the pool's, not the VM's %s", poolID, got.Tags, digitalocean.VMTag(string(vm.UID)))
	}
	w.loginAsVM("taker", poolID)

	w.eventually(30*time.Second, "the pool member released, the droplet kept", func() string {
		if _, err := w.droplets.Get(w.ns, member, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return "member " + member + " still exists"
		}
		if _, ok := w.fakeDroplet(poolID); !ok {
			return "the droplet was deleted with the member"
		}
		return ""
	})
	w.loginAsVM("taker", poolID) // with the member's Key gone from DigitalOcean too

	w.setEvent("ev", env, false) // the pool drains
	if err := w.hf.VMs.Delete(w.ns, "taker", nil); err != nil {
		t.Fatal(err)
	}
	w.eventually(60*time.Second, "no droplet and no key left", func() string {
		if n, k := len(w.do.Droplets(testToken)), len(w.do.Keys(testToken)); n+k > 0 {
			return fmt.Sprintf("%d droplets, %d keys", n, k)
		}
		return ""
	})
}

// TestSharedKeyVMTakesAPoolDroplet: under ssh_key_scope: environment the
// pool's droplets are made with the shared key, and a VM that takes one
// logs in with the shared Secret, as its other VMs do.
func TestSharedKeyVMTakesAPoolDroplet(t *testing.T) {
	w, env := poolWorld(t, worldOptions{}, 1, true, "ssh_key_scope", "environment")
	var poolID int
	for poolID = range w.waitPoolReady(1) {
	}
	w.createVM("taker", env, "ubuntu")
	w.waitRunning("taker")
	if d := w.droplet("taker"); d.Status.DropletID != poolID {
		t.Fatalf("the VM runs on droplet %d, want the pool's %d", d.Status.DropletID, poolID)
	}
	if vm := w.vm("taker"); vm.Spec.SecretName != virtualmachine.SharedKeyName(env.Name) {
		t.Errorf("secret_name %q, want the shared %q", vm.Spec.SecretName, virtualmachine.SharedKeyName(env.Name))
	}
	if _, err := w.hf.Secrets.Get(w.ns, "taker-ssh", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the VM has a key-pair Secret of its own (%v)", err)
	}
	w.loginAsVM("taker", poolID)
}

func isPoolTag(tag string) bool {
	_, ok := digitalocean.PoolUIDOfTag(tag)
	return ok
}

// loginAsVM logs in to droplet id as Gargantua's shell would for the VM.
func (w *world) loginAsVM(name string, id int) {
	w.t.Helper()
	vm := w.vm(name)
	signer, err := ssh.ParsePrivateKey(w.secret(vm.Spec.SecretName).Data[sshkey.PrivateKeyField])
	if err != nil {
		w.t.Fatalf("%s: Secret %s has no usable private key: %v", name, vm.Spec.SecretName, err)
	}
	addr, ok := w.do.SSHAddr(testToken, id)
	if !ok {
		w.t.Fatalf("droplet %d serves no SSH", id)
	}
	if out := sshRun(w.t, addr, vm.Spec.SshUsername, signer, "hostname"); out == "" {
		w.t.Errorf("%s: no login to droplet %d", name, id)
	}
}

// TestNoReadyPoolDropletTakesTheNormalPath: a pool with nothing ready (no
// event active) never holds a VM back.
func TestNoReadyPoolDropletTakesTheNormalPath(t *testing.T) {
	w, env := poolWorld(t, worldOptions{}, 2, false)
	before := w.do.RouteRequests(fakedo.RouteCreateDroplets)
	w.createVM("walk-in", env, "ubuntu")
	w.waitRunning("walk-in")
	d := w.droplet("walk-in")
	if d.Spec.ClaimedDropletID != 0 || v1alpha1.Created.GetReason(d) == v1alpha1.ReasonClaimedFromPool {
		t.Errorf("took a pool droplet (%d) though none was ready", d.Spec.ClaimedDropletID)
	}
	if after := w.do.RouteRequests(fakedo.RouteCreateDroplets); after != before+1 {
		t.Errorf("%d creates for one VM, want 1", after-before)
	}
}

// TestClaimsAreAtomic: 50 VMs at once against 10 ready pool droplets, with
// 5 workers: no droplet goes to two VMs, every VM runs, and once the pool
// drains DigitalOcean holds exactly the 50 droplets.
func TestClaimsAreAtomic(t *testing.T) {
	w, env := poolWorld(t, worldOptions{workers: 5}, 10, true)
	pooled := w.waitPoolReady(10)
	const n = 50
	var names []string
	var wg sync.WaitGroup
	for i := range n {
		names = append(names, fmt.Sprintf("rush-%02d", i))
		wg.Add(1)
		go func(name string) {
			defer wg.Done()
			if _, err := w.hf.CreateVM(w.ns, name, env, "ubuntu", "digitalocean"); err != nil {
				t.Error(err)
			}
		}(names[i])
	}
	wg.Wait()
	// Within DigitalOcean's 250 requests a minute, the VMs the pool cannot
	// serve wait their turn to be created.
	w.eventually(4*time.Minute, "every VM running", func() string {
		for _, n := range names {
			if vm := w.vm(n); vm.Status.Status != hfv1.VmStatusRunning {
				return fmt.Sprintf("%s is %q", n, vm.Status.Status)
			}
		}
		return ""
	})
	w.setEvent("ev", env, false)

	byID := map[int]string{}
	taken := 0
	for _, name := range names {
		d := w.droplet(name)
		if other, dup := byID[d.Status.DropletID]; dup {
			t.Errorf("droplet %d serves both %s and %s", d.Status.DropletID, other, name)
		}
		byID[d.Status.DropletID] = name
		if _, ok := pooled[d.Status.DropletID]; ok {
			taken++
		}
	}
	t.Logf("%d of %d VMs took a pool droplet; requests: %v", taken, n, w.do.RequestCounts())
	if taken == 0 {
		t.Error("no VM took a pool droplet")
	}
	w.eventually(90*time.Second, "exactly the VMs' droplets left", func() string {
		if got := len(w.do.Droplets(testToken)); got != n {
			return fmt.Sprintf("%d droplets in DigitalOcean, want %d; pools %s", got, n, w.poolStatuses())
		}
		if m := w.poolMembers(); len(m) > 0 {
			return fmt.Sprintf("%d pool members", len(m))
		}
		return ""
	})
}

// poolStatuses says what each WarmPool's status holds, for failures.
func (w *world) poolStatuses() string {
	f, err := provisioning.NewFactoryFromConfig(testenv.Require(w.t).Config())
	if err != nil {
		return err.Error()
	}
	list, err := f.Provisioning().V1alpha1().WarmPool().List(w.ns, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, p := range list.Items {
		out = append(out, fmt.Sprintf("%s: %+v", p.Name, p.Status))
	}
	return strings.Join(out, "; ")
}

// TestSweeperSparesLivePoolDroplets: the orphan sweep, every half second
// with no grace, leaves a live pool's droplets (members with no VM) and the
// one a VM took (which names only its gone member: its VM's Droplet holds
// its ID), and deletes a droplet of a pool that no longer exists.
func TestSweeperSparesLivePoolDroplets(t *testing.T) {
	w, env := poolWorld(t, worldOptions{sweepInterval: 500 * time.Millisecond, orphanGrace: time.Millisecond}, 2, true)
	pooled := w.waitPoolReady(2)
	w.createVM("taker", env, "ubuntu")
	w.waitRunning("taker")
	// The taken droplet keeps the member's tags; its member goes at the
	// handover, and from then on only the VM's Droplet holds its ID.
	w.eventually(30*time.Second, "the taken droplet's member handed over", func() string {
		for _, m := range w.poolMembers() {
			if m.Status.Claim != nil {
				return "member " + m.Name + " still claimed"
			}
		}
		return ""
	})
	tags := append(digitalocean.DropletTags(w.ns, w.ns, "hfdo-pool-gone", "uid-of-a-gone-member", nil), digitalocean.PoolTag("uid-of-a-deleted-pool"))
	goneID := w.do.CreateDropletOutOfBand(testToken, godo.DropletCreateRequest{
		Name: "hfdo-pool-gone", Region: "nyc1", Size: "s-1vcpu-1gb", Image: godo.DropletCreateImage{Slug: "ubuntu-22-04-x64"}, Tags: tags,
	}).ID
	w.eventually(30*time.Second, "the gone pool's droplet swept", func() string {
		if _, ok := w.fakeDroplet(goneID); ok {
			return "still there"
		}
		return ""
	})
	w.consistently(3*time.Second, "live pool droplets and the taken one spared", func() string {
		for id, member := range pooled {
			if _, ok := w.fakeDroplet(id); !ok {
				return fmt.Sprintf("droplet %d of member %s was swept", id, member)
			}
		}
		return ""
	})
}
