package chart

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// readyWithin bounds how long a controller may take to sync its caches, or a standby
// to see the leader's Lease; the kubelet itself would wait as long as it takes.
const readyWithin = 2 * time.Minute

// TestProbesPassOnLeaderAndStandby runs two replicas of a default install, each with
// the args and probes the chart renders, as the chart's ServiceAccount, and probes
// them as the kubelet would: both stay live, the leader turns ready once its caches
// are synced, and the standby is ready too while the leader holds the Lease, so a
// rolling update proceeds. Each replica is a pod of its own: its own hostname (the
// leader-election identity) and, the two sharing this machine's network, its own
// metrics.port, the one value set.
func TestProbesPassOnLeaderAndStandby(t *testing.T) {
	env := testenv.Require(t)
	ctx := t.Context()
	ns := env.NewNamespace(t)
	bin := buildController(t)

	type replica struct {
		pod  string
		c    corev1.Container
		proc *process
	}
	replicas := []*replica{{pod: "replica-a"}, {pod: "replica-b"}}
	var kubeconfig string
	for i, r := range replicas {
		ms := render(t, release, ns, "--set", fmt.Sprintf("metrics.port=%d", freePort(t)))
		var d appsv1.Deployment
		only(t, ms, "Deployment").into(t, &d)
		r.c = controller(t, &d)
		if i == 0 {
			newApplier(t, env.Config()).apply(ctx, t, ms, false)
			saCfg, err := env.ServiceAccountConfig(ctx, ns, d.Spec.Template.Spec.ServiceAccountName)
			if err != nil {
				t.Fatal(err)
			}
			kubeconfig = writeTokenKubeconfig(t, saCfg)
		}
		if !slices.Contains(r.c.Args, "--leader-elect=true") {
			t.Fatalf("default args %q do not elect a leader", r.c.Args)
		}
	}
	run := func(r *replica) {
		// What a pod gets from its environment instead of the args: the apiserver.
		args := append(slices.Clone(r.c.Args), "--kubeconfig="+kubeconfig, "--do-api-url=http://127.0.0.1:1")
		r.proc = start(t, r.pod, podCommand(r.pod, bin, args...))
		untilProbed(t, r.proc, r.c, r.c.LivenessProbe, "live", livenessBudget(r.c.LivenessProbe))
		untilProbed(t, r.proc, r.c, r.c.ReadinessProbe, "ready", readyWithin)
	}

	admin, err := kubernetes.NewForConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	holder := func() string {
		lease, err := admin.CoordinationV1().Leases(ns).Get(ctx, "hf-provisioner-digitalocean", metav1.GetOptions{})
		if err != nil || lease.Spec.HolderIdentity == nil {
			return fmt.Sprintf("no holder (%v)", err)
		}
		return *lease.Spec.HolderIdentity
	}

	leader, standby := replicas[0], replicas[1]
	run(leader)
	if h := holder(); h != leader.pod {
		t.Fatalf("Lease held by %q once %s is ready, want %s", h, leader.pod, leader.pod)
	}
	run(standby)
	if h := holder(); h != leader.pod {
		t.Errorf("Lease held by %q, want the first replica %s", h, leader.pod)
	}
	if log := standby.proc.logs.String(); strings.Contains(log, "elected leader") || strings.Contains(log, "controller ready") {
		t.Errorf("%s leads while %s holds the Lease:\n%s", standby.pod, leader.pod, log)
	}
	for _, r := range replicas {
		if err := probe(r.c, r.c.LivenessProbe); err != nil {
			t.Errorf("%s liveness: %v", r.pod, err)
		}
		metrics := &corev1.Probe{ProbeHandler: r.c.ReadinessProbe.ProbeHandler, TimeoutSeconds: r.c.ReadinessProbe.TimeoutSeconds}
		metrics.HTTPGet = metrics.HTTPGet.DeepCopy()
		metrics.HTTPGet.Path = "/metrics"
		if err := probe(r.c, metrics); err != nil {
			t.Errorf("%s serves no /metrics by default: %v", r.pod, err)
		}
	}
}
