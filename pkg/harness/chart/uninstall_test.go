package chart

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/finalizer"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/tokensecret"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/warmpool"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// ourFinalizers are every finalizer this provisioner puts on objects, named from
// the handlers themselves (not from the rule the drain removes them by).
var ourFinalizers = []string{
	finalizer.Of(finalizer.VMCleanupHandler),
	finalizer.Of(finalizer.DropletCleanupHandler),
	finalizer.Of(finalizer.KeyCleanupHandler),
	tokensecret.InUseFinalizer,
}

// TestUninstallDrainsTheInstallation runs the documented `helm uninstall` of a
// release with VMs running (some of a scheduled event's VM set, with Gargantua's
// finalizer), a warm pool and an Environment's shared SSH key, under two tokens
// (one a plain-text token, copied into Secrets held by token-in-use). While
// DigitalOcean refuses the token, the uninstall is refused and nothing goes.
// Once it accepts it, the uninstall goes through: the fake DigitalOcean holds
// nothing of the installation, no object keeps a finalizer of ours, the hook's
// objects are gone, and the VMs Gargantua still has go as soon as Gargantua
// deletes them.
//
// No kubelet, Deployment or Job controller runs here, so the test stands in for
// them: the controller is a local process with the Deployment's args and
// ServiceAccount, stopped (as its pod would be) once the Deployment is scaled to
// 0; the hook's Job is run as a local process with its container's args and its
// ServiceAccount's token, and its status written as the Job controller would.
func TestUninstallDrainsTheInstallation(t *testing.T) {
	env := testenv.Require(t)
	ctx := t.Context()
	ns := env.NewNamespace(t)
	kc := "--kubeconfig=" + env.KubeconfigPath
	const tokenA, tokenB = "dop_v1_drain_a", "dop_v1_drain_b"

	do := fakedo.New(fakedo.Options{BootDelay: 200 * time.Millisecond, SSH: true})
	if err := do.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(do.Close)
	do.AddAccount(tokenA, fakedo.AccountOptions{})
	do.AddAccount(tokenB, fakedo.AccountOptions{})
	bin := buildController(t)

	mustHelm(t, "install", release, chartDir(t), "-n", ns, kc, "--set", "digitalocean.apiURL="+do.URL())
	admin, err := kubernetes.NewForConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	d, err := admin.AppsV1().Deployments(ns).Get(ctx, release, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctl := startPod(t, "controller", bin, ns, d.Spec.Template.Spec, env,
		// Loopback endpoints, the fake's sshd, and a short Lease so the drain
		// need not wait 45 s for the stopped controller's to expire.
		"--metrics-addr=127.0.0.1:0", "--ssh-port="+strconv.Itoa(do.SSHPort()))

	hf, vms := makeWork(t, ns, tokenA, tokenB)
	dyn, err := dynamic.NewForConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 2*time.Minute, "VMs running, the pool ready, keys and droplets under both tokens", func() string {
		for _, name := range vms() {
			vm, err := hf.Clients.VMs.Get(ns, name, metav1.GetOptions{})
			if err != nil || vm.Status.Status != hfv1.VmStatusRunning {
				return name + " not running"
			}
		}
		if pool, err := dyn.Resource(warmPoolGVR).Namespace(ns).Get(ctx, warmpool.PoolName("pooled", "ubuntu"), metav1.GetOptions{}); err != nil {
			return err.Error()
		} else if ready, _, _ := unstructured.NestedInt64(pool.Object, "status", "ready"); ready != 2 {
			return fmt.Sprintf("pool has %d ready", ready)
		}
		if len(do.Droplets(tokenA)) == 0 || len(do.Droplets(tokenB)) == 0 || len(do.Keys(tokenB)) == 0 {
			return "nothing yet in DigitalOcean under both tokens"
		}
		return ""
	})

	// While DigitalOcean refuses the token, the uninstall is refused: the drain
	// says why in one line, nothing is deleted, and the controller is back.
	do.SetFaults(fakedo.Faults{Rules: map[string]fakedo.FaultRule{
		fakedo.RouteDeleteDropletsByTag: {ErrorRate: 1, ErrorStatus: http.StatusForbidden}}})
	refused := uninstall(t, env, bin, ns, ctl, "")
	if refused.err == nil {
		t.Fatal("helm uninstall succeeded while DigitalOcean refused the token")
	}
	lines := strings.Split(strings.TrimSpace(refused.hookLog), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "hf-provisioner-digitalocean drain: ") ||
		!strings.Contains(last, "Secret ") || !strings.Contains(last, "rejected the API token") {
		t.Errorf("the refused drain's last line %q does not name the token's Secret and the refusal", last)
	}
	if d, err := admin.AppsV1().Deployments(ns).Get(ctx, release, metav1.GetOptions{}); err != nil {
		t.Errorf("after a refused uninstall: %v", err)
	} else if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
		t.Errorf("after a refused uninstall the Deployment has %v replicas, want it back at 1", d.Spec.Replicas)
	}
	if n := len(do.Droplets(tokenA)) + len(do.Droplets(tokenB)); n != 6 {
		t.Errorf("a refused uninstall left %d droplets of 6", n)
	}
	if left, err := dyn.Resource(dropletGVR).Namespace(ns).List(ctx, metav1.ListOptions{}); err != nil || len(left.Items) == 0 {
		t.Errorf("a refused uninstall released the Droplets (%v)", err)
	}
	do.SetFaults(fakedo.Faults{})

	if run := uninstall(t, env, bin, ns, ctl, refused.jobUID); run.err != nil {
		t.Fatalf("helm uninstall: %v", run.err)
	}

	for _, token := range []string{tokenA, tokenB} {
		if n, k := len(do.Droplets(token)), len(do.Keys(token)); n != 0 || k != 0 {
			t.Errorf("DigitalOcean holds %d droplets and %d SSH keys under %s after the uninstall", n, k, token)
		}
	}
	checkNothingOfOursLeft(t, env, ns)
	for _, name := range []string{release + "-drain"} {
		if _, err := admin.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("hook Job %s after the uninstall: %v, want NotFound", name, err)
		}
		if _, err := admin.RbacV1().Roles(ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("hook Role %s after the uninstall: %v, want NotFound", name, err)
		}
		if _, err := admin.RbacV1().RoleBindings(ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("hook RoleBinding %s after the uninstall: %v, want NotFound", name, err)
		}
		if _, err := admin.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("hook ServiceAccount %s after the uninstall: %v, want NotFound", name, err)
		}
	}
	if _, err := admin.AppsV1().Deployments(ns).Get(ctx, release, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Deployment after the uninstall: %v, want NotFound", err)
	}

	// Gargantua deletes its VMs as it always does (the event's end deletes its VM
	// set, whose VMs the garbage collector deletes): they go.
	runCtx, stopGargantua := context.WithCancel(ctx)
	go func() { _ = hf.Run(runCtx) }()
	defer stopGargantua()
	names := vms()
	if err := hf.DeleteVMSet("set"); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if err := hf.Clients.VMs.Delete(ns, name, nil); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, time.Minute, "Gargantua's VMs gone once it deletes them", func() string {
		left, err := hf.Clients.VMs.List(ns, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		if len(left.Items) > 0 {
			return fmt.Sprintf("%d VMs left, e.g. %s with finalizers %v", len(left.Items), left.Items[0].Name, left.Items[0].Finalizers)
		}
		return ""
	})
}

// startPod runs bin as the container of pod spec would run: its args, then
// extra ones standing in for the pod's environment, authenticated as its
// ServiceAccount.
func startPod(t *testing.T, name, bin, ns string, pod corev1.PodSpec, env *testenv.Env, extra ...string) *process {
	t.Helper()
	saCfg, err := env.ServiceAccountConfig(t.Context(), ns, pod.ServiceAccountName)
	if err != nil {
		t.Fatal(err)
	}
	args := append(slices.Clone(pod.Containers[0].Args), "--kubeconfig="+writeTokenKubeconfig(t, saCfg))
	cmd := exec.Command(bin, append(args, extra...)...)
	cmd.Env = append(image.EnvironWithout("KUBECONFIG=", "HF_", "DIGITALOCEAN_", "CATTLE_"),
		"CATTLE_ELECTION_LEASE_DURATION=4s", "CATTLE_ELECTION_RENEW_DEADLINE=3s", "CATTLE_ELECTION_RETRY_PERIOD=500ms")
	return start(t, name, cmd)
}

// makeWork sets up, as Gargantua and an operator do, two Environments on two
// tokens and four VMs: a running scheduled event's VM set of two in "pooled",
// whose warm pool keeps two droplets, and two on-demand VMs in "shared", whose
// Environment has one SSH key for all (it stays registered) and a plain-text
// token. vms lists the VMs' names.
func makeWork(t *testing.T, ns, tokenA, tokenB string) (*gargantuasim.Gargantua, func() []string) {
	t.Helper()
	env := testenv.Require(t)
	hf, err := gargantuasim.New(env.Config(), ns, gargantuasim.V3_0)
	if err != nil {
		t.Fatal(err)
	}
	c := hf.Clients
	for _, err := range []error{
		create(c.Secrets.Create(gargantuasim.TokenSecret(ns, "do-token", tokenA))),
		create(c.Templates.Create(gargantuasim.Template(ns, "ubuntu", "ubuntu-22-04-x64", nil))),
		create(c.Envs.Create(gargantuasim.Environment(ns, "pooled",
			map[string]string{"region": "nyc1", "token-secret": "do-token", "warm_pool": "2"},
			map[string]map[string]string{"ubuntu": {"size": "s-1vcpu-1gb"}}))),
		create(c.StartEvent(ns, "ev", map[string]map[string]int{"pooled": {"ubuntu": 10}})),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	shared, err := c.Envs.Create(gargantuasim.Environment(ns, "shared",
		map[string]string{"region": "nyc1", "token": tokenB, "ssh_key_scope": "environment"},
		map[string]map[string]string{"ubuntu": {"size": "s-1vcpu-1gb"}}))
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"claim-1", "claim-2"}
	for _, n := range names {
		if _, err := c.CreateVM(ns, n, shared, "ubuntu", "digitalocean"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := hf.CreateVMSet("set", "pooled", "ubuntu", 2, "ev"); err != nil {
		t.Fatal(err)
	}
	return hf, func() []string {
		set, err := hf.VMSetVMs("set")
		if err != nil {
			t.Fatal(err)
		}
		out := slices.Clone(names)
		for _, vm := range set {
			out = append(out, vm.Name)
		}
		return out
	}
}

// uninstalled is what one `helm uninstall` did: its error, its hook's log and Job.
type uninstalled struct {
	err     error
	hookLog string
	jobUID  types.UID
}

// uninstall runs `helm uninstall` while standing in for the cluster's controllers
// and kubelet: the Deployment scaled to 0 stops the controller process; the hook's
// Job (not the one of UID skip, left by an earlier uninstall) runs as a process with
// its pod's args and ServiceAccount, and gets the status its exit gives.
func uninstall(t *testing.T, env *testenv.Env, bin, ns string, ctl *process, skip types.UID) uninstalled {
	t.Helper()
	helmDone := make(chan error, 1)
	go func() {
		_, errOut, err := runHelm(t, "uninstall", release, "-n", ns, "--kubeconfig="+env.KubeconfigPath)
		if err != nil {
			err = fmt.Errorf("%w: %s", err, errOut)
		}
		helmDone <- err
	}()
	admin, err := kubernetes.NewForConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	var out uninstalled
	var hook *process
	var job *batchv1.Job
	for {
		select {
		case out.err = <-helmDone:
			if hook != nil {
				out.hookLog = hook.logs.String()
			}
			return out
		case <-time.After(200 * time.Millisecond):
		}
		if !ctl.done() {
			d, err := admin.AppsV1().Deployments(ns).Get(ctx, release, metav1.GetOptions{})
			if apierrors.IsNotFound(err) || (err == nil && scaledToZero(d)) {
				ctl.stop()
			}
		}
		if hook == nil {
			found, err := admin.BatchV1().Jobs(ns).Get(ctx, release+"-drain", metav1.GetOptions{})
			if err == nil && found.UID != skip {
				job, out.jobUID = found, found.UID
				hook = startPod(t, "drain hook", bin, ns, job.Spec.Template.Spec, env)
			}
			continue
		}
		if hook.done() && job != nil {
			finishJob(t, admin, job, hook.err == nil)
			job = nil
		}
	}
}

func scaledToZero(d *appsv1.Deployment) bool { return d.Spec.Replicas != nil && *d.Spec.Replicas == 0 }

// finishJob writes the status the Job controller writes once the Job's one pod
// succeeded or failed.
func finishJob(t *testing.T, admin kubernetes.Interface, job *batchv1.Job, succeeded bool) {
	t.Helper()
	now := metav1.Now()
	job = job.DeepCopy()
	job.Status.StartTime = &now
	cond := func(c batchv1.JobConditionType) batchv1.JobCondition {
		return batchv1.JobCondition{Type: c, Status: corev1.ConditionTrue, LastProbeTime: now, LastTransitionTime: now}
	}
	if succeeded {
		job.Status.Succeeded, job.Status.CompletionTime = 1, &now
		job.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet), cond(batchv1.JobComplete)}
	} else {
		job.Status.Failed = 1
		job.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget), cond(batchv1.JobFailed)}
	}
	if _, err := admin.BatchV1().Jobs(job.Namespace).UpdateStatus(t.Context(), job, metav1.UpdateOptions{}); err != nil {
		t.Errorf("writing the hook Job's status: %v", err)
	}
}

// checkNothingOfOursLeft: no object of the namespace keeps a finalizer of ours,
// no VM the droplet annotation, and no Droplet, Key, WarmPool or Lease is left.
func checkNothingOfOursLeft(t *testing.T, env *testenv.Env, ns string) {
	t.Helper()
	dyn, err := dynamic.NewForConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	for _, gvr := range []schema.GroupVersionResource{
		vmGVR, {Version: "v1", Resource: "secrets"}, dropletGVR, keyGVR, warmPoolGVR,
		{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"},
	} {
		list, err := dyn.Resource(gvr).Namespace(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range list.Items {
			if slices.ContainsFunc(item.GetFinalizers(), func(f string) bool { return slices.Contains(ourFinalizers, f) }) {
				t.Errorf("%s %s keeps finalizers %v after the uninstall", gvr.Resource, item.GetName(), item.GetFinalizers())
			}
			if _, ok := item.GetAnnotations()[v1alpha1.KnownDropletAnnotation]; ok {
				t.Errorf("%s %s names a droplet that is gone: %v", gvr.Resource, item.GetName(), item.GetAnnotations())
			}
			switch gvr.Resource {
			case "droplets", "keys", "warmpools", "leases":
				t.Errorf("%s %s is left after the uninstall", gvr.Resource, item.GetName())
			}
		}
	}
}

func create[T any](_ T, err error) error { return err }
