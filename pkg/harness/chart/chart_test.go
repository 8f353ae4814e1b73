package chart

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

const release = "hf-provisioner-digitalocean"

func TestHelmLint(t *testing.T) {
	for name, args := range map[string][]string{
		"defaults":   nil,
		"all values": {"-f", testdata(t, "all-values.yaml")},
	} {
		t.Run(name, func(t *testing.T) {
			out := mustHelm(t, append([]string{"lint", "--strict", chartDir(t), "--namespace", "team-a"}, args...)...)
			if !strings.Contains(out, "0 chart(s) failed") {
				t.Errorf("helm lint output:\n%s", out)
			}
		})
	}
}

func TestTemplateDefaults(t *testing.T) {
	ms := render(t, release, "team-a")
	got := kinds(ms)
	sort.Strings(got)
	// The uninstall's drain hook is a Job with a ServiceAccount, Role and RoleBinding.
	want := []string{"Deployment", "Job", "Role", "Role", "RoleBinding", "RoleBinding", "Service", "ServiceAccount", "ServiceAccount"}
	if !slices.Equal(got, want) {
		t.Errorf("default objects = %v, want %v", got, want)
	}
	decodeAll(t, ms)
	// The install command of the README names the release after the chart; its
	// objects keep that plain name.
	for _, m := range ms {
		want := release
		switch {
		case m.isHook():
			want = release + "-drain"
		case m.Obj.GetKind() == "Service":
			want = release + "-metrics"
		}
		if m.Obj.GetName() != want {
			t.Errorf("%s: name %q, want %q", m, m.Obj.GetName(), want)
		}
	}
	var d appsv1.Deployment
	only(t, ms, "Deployment").into(t, &d)
	c := controller(t, &d)
	// The repository releases push to, tagged with the chart's appVersion.
	if want := image.Repository + ":" + d.Labels["app.kubernetes.io/version"]; c.Image != want {
		t.Errorf("image = %q, want %q", c.Image, want)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
		t.Errorf("replicas = %v, want 1", d.Spec.Replicas)
	}
	wantRes := corev1.ResourceRequirements{}
	if err := yaml.Unmarshal([]byte("requests: {cpu: 50m, memory: 64Mi}\nlimits: {cpu: 500m, memory: 512Mi}"), &wantRes); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Resources, wantRes) {
		t.Errorf("resources = %+v, want %+v", c.Resources, wantRes)
	}
	// The pod's identity, from the downward API, for the Events about the controller itself.
	podEnv := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			podEnv[e.Name] = e.ValueFrom.FieldRef.FieldPath
		}
	}
	if want := map[string]string{"POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace", "POD_UID": "metadata.uid"}; !reflect.DeepEqual(podEnv, want) {
		t.Errorf("env from the downward API = %v, want %v", podEnv, want)
	}
	// A production install serves /metrics and is probed: both on by default, on one port.
	if len(c.Ports) != 1 || c.Ports[0].Name != "metrics" || c.Ports[0].ContainerPort != 8080 {
		t.Errorf("ports = %+v, want metrics on 8080", c.Ports)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" ||
		c.LivenessProbe.HTTPGet.Port != intstr.FromString("metrics") {
		t.Errorf("liveness probe = %+v, want GET /healthz on port metrics", c.LivenessProbe)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" ||
		c.ReadinessProbe.HTTPGet.Port != intstr.FromString("metrics") {
		t.Errorf("readiness probe = %+v, want GET /readyz on port metrics", c.ReadinessProbe)
	}
	if d.Spec.Strategy.Type != "" {
		t.Errorf("with leader election the default RollingUpdate strategy fits, got %q", d.Spec.Strategy.Type)
	}
}

func TestTemplateAllValues(t *testing.T) {
	ms := render(t, release, "team-a", "-f", testdata(t, "all-values.yaml"))
	got := kinds(ms)
	sort.Strings(got)
	want := []string{"ConfigMap", "Deployment", "Job", "PrometheusRule", "Role", "Role", "RoleBinding", "RoleBinding", "Service", "ServiceAccount", "ServiceAccount", "ServiceMonitor"}
	if !slices.Equal(got, want) {
		t.Errorf("objects = %v, want %v", got, want)
	}
	decodeAll(t, ms)

	var d appsv1.Deployment
	only(t, ms, "Deployment").into(t, &d)
	if d.Name != "hfdo-all" {
		t.Errorf("fullnameOverride: Deployment named %q", d.Name)
	}
	pod := d.Spec.Template
	c := controller(t, &d)
	checks := map[string]bool{
		"image":               c.Image == "registry.example.com/hobbyfarm/hf-provisioner-digitalocean:1.2.3",
		"pullPolicy":          c.ImagePullPolicy == corev1.PullAlways,
		"imagePullSecrets":    len(pod.Spec.ImagePullSecrets) == 1 && pod.Spec.ImagePullSecrets[0].Name == "regcred",
		"replicas":            d.Spec.Replicas != nil && *d.Spec.Replicas == 2,
		"serviceAccountName":  pod.Spec.ServiceAccountName == only(t, ms, "ServiceAccount").Obj.GetName(),
		"podAnnotations":      pod.Annotations["example.com/scrape"] == "true",
		"podLabels":           pod.Labels["team"] == "hobbyfarm",
		"selector wins":       pod.Labels["app.kubernetes.io/name"] == "hfdo" && d.Spec.Selector.MatchLabels["app.kubernetes.io/name"] == "hfdo",
		"priorityClassName":   pod.Spec.PriorityClassName == "hobbyfarm-controllers",
		"nodeSelector":        pod.Spec.NodeSelector["kubernetes.io/os"] == "linux",
		"tolerations":         len(pod.Spec.Tolerations) == 2,
		"affinity":            pod.Spec.Affinity != nil && pod.Spec.Affinity.NodeAffinity != nil && pod.Spec.Affinity.PodAntiAffinity != nil,
		"extraEnv":            len(c.Env) == 5 && c.Env[3].Name == "HTTPS_PROXY" && c.Env[4].ValueFrom != nil,
		"resources":           c.Resources.Limits.Memory().String() == "512Mi",
		"fsGroup":             pod.Spec.SecurityContext.FSGroup != nil && *pod.Spec.SecurityContext.FSGroup == 65532,
		"sa annotations":      only(t, ms, "ServiceAccount").Obj.GetAnnotations()["example.com/owner"] == "platform",
		"selector matches":    matches(d.Spec.Selector.MatchLabels, pod.Labels),
		"container port":      len(c.Ports) == 1 && c.Ports[0].Name == "metrics" && c.Ports[0].ContainerPort == 9090,
		"liveness /healthz":   c.LivenessProbe != nil && c.LivenessProbe.HTTPGet.Path == "/healthz" && c.LivenessProbe.HTTPGet.Port == intstr.FromString("metrics") && c.LivenessProbe.PeriodSeconds == 30,
		"readiness /readyz":   c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet.Path == "/readyz" && c.ReadinessProbe.HTTPGet.Port == intstr.FromString("metrics") && c.ReadinessProbe.SuccessThreshold == 2,
		"no Recreate":         d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType,
		"extraArgs appended":  c.Args[len(c.Args)-1] == "--some-future-flag=1",
		"do-api-url passed":   slices.Contains(c.Args, "--do-api-url=http://127.0.0.1:8089"),
		"installation-id":     slices.Contains(c.Args, "--installation-id=lab-1"),
		"lease-name":          slices.Contains(c.Args, "--lease-name=hfdo-lock"),
		"metrics-addr":        slices.Contains(c.Args, "--metrics-addr=:9090"),
		"workers":             slices.Contains(c.Args, "--workers=12"),
		"log-level":           slices.Contains(c.Args, "--log-level=debug"),
		"log-format":          slices.Contains(c.Args, "--log-format=json"),
		"boot-resync":         slices.Contains(c.Args, "--boot-resync=3s"),
		"active-resync":       slices.Contains(c.Args, "--active-resync=2m30s"),
		"ssh-port":            slices.Contains(c.Args, "--ssh-port=2222"),
		"delete-tainted":      slices.Contains(c.Args, "--delete-tainted=false"),
		"config-error-grace":  slices.Contains(c.Args, "--config-error-grace=90s"),
		"version label quote": pod.Labels["app.kubernetes.io/version"] == "0.1.0",
	}
	for name, ok := range checks {
		if !ok {
			t.Errorf("all values: %s not reflected in the Deployment", name)
		}
	}

	var svc corev1.Service
	only(t, ms, "Service").into(t, &svc)
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 80 || svc.Spec.Ports[0].TargetPort != intstr.FromString("metrics") {
		t.Errorf("metrics Service ports = %+v, want 80 -> metrics", svc.Spec.Ports)
	}
	if !reflect.DeepEqual(svc.Spec.Selector, d.Spec.Selector.MatchLabels) {
		t.Errorf("metrics Service selector %v, want the Deployment's %v", svc.Spec.Selector, d.Spec.Selector.MatchLabels)
	}
	if svc.Annotations["prometheus.io/scrape"] != "true" {
		t.Errorf("metrics Service annotations = %v", svc.Annotations)
	}

	sm := only(t, ms, "ServiceMonitor").Obj
	if sm.GetAPIVersion() != "monitoring.coreos.com/v1" {
		t.Errorf("ServiceMonitor apiVersion %q", sm.GetAPIVersion())
	}
	if sm.GetLabels()["release"] != "kube-prometheus-stack" {
		t.Errorf("ServiceMonitor labels = %v", sm.GetLabels())
	}
	selector, _, _ := unstructuredMap(sm.Object, "spec", "selector", "matchLabels")
	if !matches(selector, svc.Labels) {
		t.Errorf("ServiceMonitor selector %v does not select the metrics Service (labels %v)", selector, svc.Labels)
	}
	endpoints, _ := sm.Object["spec"].(map[string]any)["endpoints"].([]any)
	if len(endpoints) != 1 {
		t.Fatalf("ServiceMonitor endpoints = %v", endpoints)
	}
	ep := endpoints[0].(map[string]any)
	if ep["port"] != "metrics" || ep["path"] != "/metrics" || ep["interval"] != "30s" || ep["scrapeTimeout"] != "10s" {
		t.Errorf("ServiceMonitor endpoint = %v", ep)
	}

	dash := only(t, ms, "ConfigMap").Obj
	if dash.GetLabels()["grafana_dashboard_hobbyfarm"] != "yes" || dash.GetAnnotations()["grafana_folder"] != "HobbyFarm" || dash.GetNamespace() != "monitoring" {
		t.Errorf("dashboard ConfigMap %s/%s labels %v annotations %v", dash.GetNamespace(), dash.GetName(), dash.GetLabels(), dash.GetAnnotations())
	}
	pr := only(t, ms, "PrometheusRule")
	if pr.Obj.GetLabels()["release"] != "kube-prometheus-stack" || pr.Obj.GetName() != "hfdo-all" {
		t.Errorf("PrometheusRule %s labels %v", pr.Obj.GetName(), pr.Obj.GetLabels())
	}
	for _, want := range []string{`{namespace="team-a",job="hfdo-all-metrics"`, "team: hobbyfarm", "https://wiki.example.com/hobbyfarm/runbook.md#",
		">= 3", "< 1000)", "> 1200", "> 600", "for: 3m"} {
		if !strings.Contains(string(pr.YAML), want) {
			t.Errorf("PrometheusRule lacks %q:\n%s", want, pr.YAML)
		}
	}
}

// TestAllValuesSetsEveryValue keeps testdata/all-values.yaml complete: each key of
// values.yaml must be set there, so TestTemplateAllValues renders every template path.
func TestAllValuesSetsEveryValue(t *testing.T) {
	defaults := readValues(t, filepath.Join(chartDir(t), "values.yaml"))
	all := readValues(t, testdata(t, "all-values.yaml"))
	for _, path := range leafPaths(defaults, "") {
		if _, ok := lookup(all, path); !ok {
			t.Errorf("testdata/all-values.yaml does not set %s", path)
		}
	}
}

// TestREADMEListsEveryValue keeps the chart README's table complete.
func TestREADMEListsEveryValue(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(chartDir(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defaults := readValues(t, filepath.Join(chartDir(t), "values.yaml"))
	for _, path := range leafPaths(defaults, "") {
		listed := false
		// A whole object such as `resources` may be listed instead of each of its keys.
		for p := path; p != ""; p = parent(p) {
			if strings.Contains(string(readme), "| `"+p+"` |") {
				listed = true
				break
			}
		}
		if !listed {
			t.Errorf("chart README lists neither %s nor an object holding it", path)
		}
	}
	if !strings.Contains(string(readme), "helm install hf-provisioner-digitalocean ./chart/hf-provisioner-digitalocean -n $NAMESPACE") {
		t.Error("chart README lost the install command of the alpha")
	}
}

func TestSchemaRejectsBadValues(t *testing.T) {
	dir := t.TempDir()
	writeValues := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name string
		args []string
		want []string // all must appear in helm's error
	}{
		{"replicas not a number", []string{"--set", "replicas=abc"}, []string{"/replicas", "want integer"}},
		{"workers a string", []string{"-f", writeValues("workers.yaml", `workers: "x"`)}, []string{"/workers", "want integer"}},
		{"workers zero", []string{"--set", "workers=0"}, []string{"/workers", "minimum"}},
		{"unknown top-level key", []string{"--set", "replicaCont=2"}, []string{"additional properties 'replicaCont' not allowed"}},
		{"unknown nested key", []string{"--set", "image.tagg=1"}, []string{"/image", "additional properties 'tagg' not allowed"}},
		// serviceAccount admits the alpha's create and name (refused by the template), nothing else.
		{"serviceAccount typo", []string{"--set", "serviceAccount.annotation.a=b"}, []string{"/serviceAccount", "'annotation' not allowed"}},
		{"unknown key in a file", []string{"-f", writeValues("typo.yaml", "leaderElection:\n  enable: false\n")}, []string{"/leaderElection", "'enable' not allowed"}},
		{"numeric image tag", []string{"-f", writeValues("tag.yaml", "image:\n  tag: 1.0\n")}, []string{"/image/tag", "want string"}},
		{"bool as string", []string{"--set-string", "leaderElection.enabled=yes"}, []string{"/leaderElection/enabled", "want boolean"}},
		{"log level", []string{"--set", "logLevel=verbose"}, []string{"/logLevel"}},
		{"log format", []string{"--set", "logFormat=xml"}, []string{"/logFormat"}},
		{"duration", []string{"--set", "resync.boot=5sec"}, []string{"/resync/boot", "does not match pattern"}},
		{"pull policy", []string{"--set", "image.pullPolicy=Sometimes"}, []string{"/image/pullPolicy"}},
		{"api url", []string{"--set", "digitalocean.apiURL=not a url"}, []string{"/digitalocean/apiURL"}},
		{"installation id", []string{"--set", "installationID=a.b"}, []string{"/installationID"}},
		{"metrics port", []string{"--set", "metrics.port=70000"}, []string{"/metrics/port", "maximum"}},
		{"ssh port zero", []string{"--set", "reachability.sshPort=0"}, []string{"/reachability/sshPort", "minimum"}},
		{"ssh port too big", []string{"--set", "reachability.sshPort=65536"}, []string{"/reachability/sshPort", "maximum"}},
		{"ssh port a string", []string{"--set-string", "reachability.sshPort=22"}, []string{"/reachability/sshPort", "want integer"}},
		{"reachability typo", []string{"--set", "reachability.port=22"}, []string{"/reachability", "'port' not allowed"}},
		{"deleteTaintedVMs a string", []string{"--set-string", "deleteTaintedVMs=false"}, []string{"/deleteTaintedVMs", "want boolean"}},
		{"config error grace", []string{"--set", "configErrorGrace=5min"}, []string{"/configErrorGrace", "does not match pattern"}},
		{"config error grace a number", []string{"--set", "configErrorGrace=300"}, []string{"/configErrorGrace", "want string"}},
		{"metrics enabled", []string{"--set-string", "metrics.enabled=true"}, []string{"/metrics/enabled", "want boolean"}},
		{"securityContext typo", []string{"--set", "securityContext.readOnlyRootFS=true"}, []string{"/securityContext", "'readOnlyRootFS' not allowed"}},
		{"resources typo", []string{"--set", "resources.limit.cpu=1"}, []string{"/resources", "'limit' not allowed"}},
		{"probe typo", []string{"--set", "probes.liveness.period=1"}, []string{"/probes/liveness", "'period' not allowed"}},
		{"extraEnv without name", []string{"-f", writeValues("env.yaml", "extraEnv:\n  - value: x\n")}, []string{"/extraEnv/0", "name"}},
		{"nodeSelector value", []string{"-f", writeValues("ns.yaml", "nodeSelector:\n  a: 1\n")}, []string{"/nodeSelector/a", "want string"}},
		{"dashboard label value a number", []string{"--set", "grafanaDashboard.labelValue=1"}, []string{"/grafanaDashboard/labelValue", "want string"}},
		{"dashboard namespace", []string{"--set", "grafanaDashboard.namespace=Monitoring"}, []string{"/grafanaDashboard/namespace", "does not match pattern"}},
		{"alert threshold a string", []string{"--set-string", "prometheusRule.thresholds.stuckDeletingMinutes=15"}, []string{"/prometheusRule/thresholds/stuckDeletingMinutes", "want integer"}},
		{"alert threshold zero", []string{"--set", "prometheusRule.thresholds.stuckProvisioningMinutes=0"}, []string{"/prometheusRule/thresholds/stuckProvisioningMinutes", "minimum"}},
		{"alert threshold typo", []string{"--set", "prometheusRule.thresholds.stuckMinutes=5"}, []string{"/prometheusRule/thresholds", "'stuckMinutes' not allowed"}},
		{"runbook url with anchor", []string{"--set", "prometheusRule.runbookURL=https://x.example/runbook.md#top"}, []string{"/prometheusRule/runbookURL", "does not match pattern"}},
		{"alert selector with braces", []string{"-f", writeValues("selector.yaml", "prometheusRule:\n  selector: '{job=\"x\"}'\n")}, []string{"/prometheusRule/selector", "does not match pattern"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, cmd := range []string{"template", "lint"} {
				var errOut string
				if cmd == "template" {
					errOut = renderErr(t, tc.args...)
				} else {
					out, stderr, err := runHelm(t, append([]string{"lint", chartDir(t)}, tc.args...)...)
					if err == nil {
						t.Fatalf("helm lint %v passed, want a schema error:\n%s", tc.args, out)
					}
					errOut = out + stderr
				}
				if !strings.Contains(errOut, "values don't meet the specifications of the schema") {
					t.Errorf("helm %s %v: not a schema error:\n%s", cmd, tc.args, errOut)
				}
				for _, w := range tc.want {
					if !strings.Contains(errOut, w) {
						t.Errorf("helm %s %v: error does not mention %q:\n%s", cmd, tc.args, w, errOut)
					}
				}
			}
		})
	}
}

// TestTemplateRejectsBadCombinations covers what the schema cannot express.
func TestTemplateRejectsBadCombinations(t *testing.T) {
	cases := map[string]struct {
		args []string
		want string
	}{
		"replicas without leader election": {[]string{"--set", "replicas=2,leaderElection.enabled=false"}, "replicas > 1 needs leaderElection.enabled=true"},
		"Gargantua's lease":                {[]string{"--set", "leaderElection.leaseName=controller-manager"}, "must not be controller-manager"},
		"ServiceMonitor without metrics":   {[]string{"--set", "metrics.enabled=false,metrics.serviceMonitor.enabled=true"}, "needs metrics.enabled=true"},
		"alerts without metrics":           {[]string{"--set", "metrics.enabled=false,prometheusRule.enabled=true"}, "prometheusRule.enabled=true needs metrics.enabled=true"},
		"dashboard without metrics":        {[]string{"--set", "metrics.enabled=false,grafanaDashboard.enabled=true"}, "grafanaDashboard.enabled=true needs metrics.enabled=true"},
		"zero configErrorGrace":            {[]string{"--set", "configErrorGrace=0s"}, "configErrorGrace must be more than zero"},
		"zero configErrorGrace, spelt out": {[]string{"--set", "configErrorGrace=0h0m0.0s"}, "configErrorGrace must be more than zero"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if errOut := renderErr(t, tc.args...); !strings.Contains(errOut, tc.want) {
				t.Errorf("error does not say %q:\n%s", tc.want, errOut)
			}
		})
	}
}

// decodeAll decodes every object strictly into its API type.
func decodeAll(t *testing.T, ms []manifest) {
	t.Helper()
	for _, m := range ms {
		var into any
		switch m.Obj.GetKind() {
		case "ServiceAccount":
			into = &corev1.ServiceAccount{}
		case "Service":
			into = &corev1.Service{}
		case "Role":
			into = &rbacv1.Role{}
		case "RoleBinding":
			into = &rbacv1.RoleBinding{}
		case "Deployment":
			into = &appsv1.Deployment{}
		case "Job":
			into = &batchv1.Job{}
		case "ConfigMap":
			into = &corev1.ConfigMap{}
		case "ServiceMonitor", "PrometheusRule":
			continue // no Go type in go.mod; the integration test applies them when their CRD exists
		default:
			t.Errorf("%s: unexpected kind", m)
			continue
		}
		m.into(t, into)
	}
}

func controller(t *testing.T, d *appsv1.Deployment) corev1.Container {
	t.Helper()
	if n := len(d.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("Deployment has %d containers, want 1", n)
	}
	return d.Spec.Template.Spec.Containers[0]
}

// matches reports whether labels has every key and value of selector.
func matches(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func unstructuredMap(obj map[string]any, path ...string) (map[string]string, bool, error) {
	cur := obj
	for _, p := range path {
		next, ok := cur[p].(map[string]any)
		if !ok {
			return nil, false, nil
		}
		cur = next
	}
	out := map[string]string{}
	for k, v := range cur {
		s, _ := v.(string)
		out[k] = s
	}
	return out, true, nil
}

func readValues(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// leafPaths lists the dotted paths of a values tree; an empty map or a list is a leaf.
func leafPaths(v map[string]any, prefix string) []string {
	var out []string
	for k, val := range v {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		if m, ok := val.(map[string]any); ok && len(m) > 0 {
			out = append(out, leafPaths(m, p)...)
		} else {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func lookup(v map[string]any, path string) (any, bool) {
	var cur any = v
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func parent(path string) string {
	if i := strings.LastIndex(path, "."); i >= 0 {
		return path[:i]
	}
	return ""
}
