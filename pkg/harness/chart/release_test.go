package chart

import (
	"slices"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// What a release installs: all in its namespace, names of its own, the
// controller's arguments and a restricted security context.

func TestEverythingInReleaseNamespace(t *testing.T) {
	for name, args := range map[string][]string{
		"defaults":   nil,
		"all values": {"-f", testdata(t, "all-values.yaml")},
	} {
		t.Run(name, func(t *testing.T) {
			for _, ns := range []string{"team-a", "hobbyfarm-system"} {
				for _, m := range render(t, release, ns, args...) {
					if m.Obj.GetKind() == "ConfigMap" && name == "all values" {
						// grafanaDashboard.namespace puts the dashboard where Grafana looks.
						if got := m.Obj.GetNamespace(); got != "monitoring" {
							t.Errorf("%s: namespace %q, want grafanaDashboard.namespace monitoring", m, got)
						}
						continue
					}
					switch m.Obj.GetKind() {
					case "ClusterRole", "ClusterRoleBinding", "Namespace", "CustomResourceDefinition",
						"PriorityClass", "StorageClass", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
						t.Errorf("%s is cluster-scoped: the chart must only make namespaced objects", m)
					}
					if got := m.Obj.GetNamespace(); got != ns {
						t.Errorf("%s: namespace %q, want the release namespace %q", m, got, ns)
					}
				}
			}
		})
	}
	// With --include-crds the only cluster-scoped objects are the chart's CRDs.
	var crds []string
	for _, m := range render(t, release, "team-a", "--include-crds") {
		if m.Obj.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, m.Obj.GetName())
		} else if m.Obj.GetNamespace() != "team-a" {
			t.Errorf("%s is not in the release namespace", m)
		}
	}
	sort.Strings(crds)
	if want := []string{"droplets.provisioning.hobbyfarm.io", "keys.provisioning.hobbyfarm.io", "warmpools.provisioning.hobbyfarm.io"}; !slices.Equal(crds, want) {
		t.Errorf("crds/ holds %v, want %v", crds, want)
	}
}

func TestTwoReleasesShareNoNames(t *testing.T) {
	// Two releases in one namespace must not collide either.
	a := render(t, "hfdo-a", "team-a")
	b := render(t, "hfdo-b", "team-a")
	names := map[string]bool{}
	for _, m := range a {
		names[m.Obj.GetKind()+"/"+m.Obj.GetName()] = true
	}
	for _, m := range b {
		if names[m.Obj.GetKind()+"/"+m.Obj.GetName()] {
			t.Errorf("releases hfdo-a and hfdo-b both make %s", m)
		}
	}
	var da, db appsv1.Deployment
	only(t, a, "Deployment").into(t, &da)
	only(t, b, "Deployment").into(t, &db)
	if matches(da.Spec.Selector.MatchLabels, db.Spec.Template.Labels) {
		t.Error("release hfdo-a's Deployment selects hfdo-b's pods")
	}
	// Names stay valid however long the release name is.
	long := strings.Repeat("x", 53)
	for _, m := range render(t, long, "team-a", "--set", "metrics.enabled=true") {
		if n := len(m.Obj.GetName()); n > 63 {
			t.Errorf("%s: name is %d characters, more than 63", m, n)
		}
	}
}

func TestContainerArgs(t *testing.T) {
	for _, ns := range []string{"team-a", "hobbyfarm"} {
		var d appsv1.Deployment
		only(t, render(t, release, ns), "Deployment").into(t, &d)
		c := controller(t, &d)
		want := []string{
			"--namespace=" + ns,
			"--install-crds=false",
			"--leader-elect=true",
			"--workers=5",
			"--log-level=info",
			"--log-format=text",
			"--boot-resync=1s",
			"--active-resync=1m",
			"--ssh-port=22",
			"--delete-tainted=true",
			"--config-error-grace=5m",
			"--metrics-addr=:8080", // one listener for /metrics and the probes
		}
		if !slices.Equal(c.Args, want) {
			t.Errorf("namespace %s: args = %q, want %q", ns, c.Args, want)
		}
		if len(c.Command) != 0 {
			t.Errorf("command = %q; the image's ENTRYPOINT is the binary", c.Command)
		}
	}

	// Probes alone also need the listener; there is one address for everything.
	var p appsv1.Deployment
	only(t, render(t, release, "team-a", "--set", "metrics.enabled=false"), "Deployment").into(t, &p)
	if args := controller(t, &p).Args; !slices.Contains(args, "--metrics-addr=:8080") || slices.Contains(args, "--metrics-addr=") {
		t.Errorf("probes alone: args %q, want --metrics-addr=:8080 only", args)
	}
	// Neither: no listener at all, not the binary's default.
	var off appsv1.Deployment
	only(t, render(t, release, "team-a", "--set", "metrics.enabled=false,probes.enabled=false"), "Deployment").into(t, &off)
	if c := controller(t, &off); !slices.Contains(c.Args, "--metrics-addr=") || len(c.Ports) != 0 || c.LivenessProbe != nil {
		t.Errorf("metrics and probes off: args %q, ports %v, liveness %v; want --metrics-addr= and no port or probe", c.Args, c.Ports, c.LivenessProbe)
	}

	var d appsv1.Deployment
	only(t, render(t, release, "team-a", "--set", "digitalocean.apiURL=https://do.example.com,leaderElection.enabled=false"), "Deployment").into(t, &d)
	args := controller(t, &d).Args
	for _, w := range []string{"--do-api-url=https://do.example.com", "--leader-elect=false", "--install-crds=false"} {
		if !slices.Contains(args, w) {
			t.Errorf("args %q lack %q", args, w)
		}
	}
	if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("without leader election the strategy must be Recreate, got %q", d.Spec.Strategy.Type)
	}

	// The reachability check's port, keeping tainted VMs and the config grace, each
	// passed once with its value.
	var r appsv1.Deployment
	only(t, render(t, release, "team-a", "--set", "reachability.sshPort=2022,deleteTaintedVMs=false,configErrorGrace=1h30m"), "Deployment").into(t, &r)
	args = controller(t, &r).Args
	for flag, want := range map[string]string{
		"--ssh-port":           "--ssh-port=2022",
		"--delete-tainted":     "--delete-tainted=false",
		"--config-error-grace": "--config-error-grace=1h30m",
	} {
		n := 0
		for _, a := range args {
			if strings.HasPrefix(a, flag+"=") {
				n++
			}
		}
		if n != 1 || !slices.Contains(args, want) {
			t.Errorf("args %q: want %q exactly once", args, want)
		}
	}
}

func TestSecurityContextIsRestricted(t *testing.T) {
	for name, args := range map[string][]string{
		"defaults":   nil,
		"all values": {"-f", testdata(t, "all-values.yaml")},
	} {
		t.Run(name, func(t *testing.T) {
			ms := render(t, release, "team-a", args...)
			var d appsv1.Deployment
			only(t, ms, "Deployment").into(t, &d)
			checkRestricted(t, &d.Spec.Template.Spec)
			var job batchv1.Job
			onlyHook(t, ms, "Job").into(t, &job)
			checkRestricted(t, &job.Spec.Template.Spec)
		})
	}
}

// checkRestricted checks a pod spec against the restricted Pod Security Standard.
func checkRestricted(t *testing.T, spec *corev1.PodSpec) {
	t.Helper()
	psc := spec.SecurityContext
	if psc == nil {
		t.Fatal("no pod securityContext")
	}
	if psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		t.Error("pod runAsNonRoot is not true")
	}
	if psc.RunAsUser == nil || *psc.RunAsUser != 65532 {
		t.Errorf("pod runAsUser = %v, want 65532", psc.RunAsUser)
	}
	if psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod seccompProfile = %+v, want RuntimeDefault", psc.SeccompProfile)
	}
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		t.Error("pod uses host namespaces")
	}
	if spec.AutomountServiceAccountToken != nil && !*spec.AutomountServiceAccountToken {
		t.Error("the controller needs its ServiceAccount token")
	}
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			t.Errorf("volume %s is a hostPath", v.Name)
		}
	}
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		sc := c.SecurityContext
		if sc == nil {
			t.Fatalf("container %s has no securityContext", c.Name)
		}
		if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
			t.Errorf("container %s: runAsNonRoot is not true", c.Name)
		}
		if sc.RunAsUser == nil || *sc.RunAsUser != 65532 {
			t.Errorf("container %s: runAsUser = %v, want 65532", c.Name, sc.RunAsUser)
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("container %s: readOnlyRootFilesystem is not true", c.Name)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("container %s: allowPrivilegeEscalation is not false", c.Name)
		}
		if sc.Privileged != nil && *sc.Privileged {
			t.Errorf("container %s is privileged", c.Name)
		}
		if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
			t.Errorf("container %s: capabilities.drop = %+v, want [ALL]", c.Name, sc.Capabilities)
		} else if len(sc.Capabilities.Add) > 0 {
			t.Errorf("container %s adds capabilities %v", c.Name, sc.Capabilities.Add)
		}
		if sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("container %s: seccompProfile = %+v, want RuntimeDefault", c.Name, sc.SeccompProfile)
		}
		for _, p := range c.Ports {
			if p.HostPort != 0 {
				t.Errorf("container %s uses hostPort %d", c.Name, p.HostPort)
			}
		}
	}
}
