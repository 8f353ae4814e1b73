package app

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/crds"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
)

// served is what an apiserver serves for the group version: discovery and,
// unless unpublished, an OpenAPI v3 document.
type served struct {
	list        *metav1.APIResourceList
	schemas     map[string]map[string]any // by kind
	unpublished bool
}

func (s served) resources(context.Context) (*metav1.APIResourceList, error) { return s.list, nil }

func (s served) openAPI(context.Context) ([]byte, bool, error) {
	if s.unpublished {
		return nil, false, nil
	}
	if s.schemas == nil {
		return nil, true, nil
	}
	components := map[string]any{}
	for kind, schema := range s.schemas {
		schema["x-kubernetes-group-version-kind"] = []map[string]string{
			{"group": "provisioning.hobbyfarm.io", "version": "v1alpha1", "kind": kind}}
		components["io.hobbyfarm.provisioning.v1alpha1."+kind] = schema
	}
	doc, err := json.Marshal(map[string]any{"openapi": "3.0.0", "components": map[string]any{"schemas": components}})
	return doc, true, err
}

// add serves crd: its resources in discovery, its schema in OpenAPI.
func (s *served) add(t *testing.T, crd *apiextv1.CustomResourceDefinition) {
	t.Helper()
	if s.list == nil {
		s.list = &metav1.APIResourceList{GroupVersion: provisioningGroupVersion}
	}
	v := crd.Spec.Versions[0]
	s.list.APIResources = append(s.list.APIResources, metav1.APIResource{Name: crd.Spec.Names.Plural, Namespaced: true,
		Kind: crd.Spec.Names.Kind, ShortNames: crd.Spec.Names.ShortNames, Categories: crd.Spec.Names.Categories})
	if v.Subresources != nil && v.Subresources.Status != nil {
		s.list.APIResources = append(s.list.APIResources, metav1.APIResource{Name: crd.Spec.Names.Plural + "/status", Kind: crd.Spec.Names.Kind})
	}
	data, err := json.Marshal(v.Schema.OpenAPIV3Schema)
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	if s.schemas == nil {
		s.schemas = map[string]map[string]any{}
	}
	s.schemas[crd.Spec.Names.Kind] = schema
}

// alphaCRD is the original alpha provisioner's CRD of kind: no field
// declared, nothing pruned.
func alphaCRD(kind, plural string, shortNames ...string) *apiextv1.CustomResourceDefinition {
	preserve := true
	return &apiextv1.CustomResourceDefinition{Spec: apiextv1.CustomResourceDefinitionSpec{
		Group: "provisioning.hobbyfarm.io",
		Names: apiextv1.CustomResourceDefinitionNames{Kind: kind, Plural: plural, ShortNames: shortNames},
		Versions: []apiextv1.CustomResourceDefinitionVersion{{Name: "v1alpha1", Served: true, Storage: true,
			Subresources: &apiextv1.CustomResourceSubresources{Status: &apiextv1.CustomResourceSubresourceStatus{}},
			Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
				Type: "object", XPreserveUnknownFields: &preserve}}}},
	}}
}

func ours(t *testing.T) map[string]*apiextv1.CustomResourceDefinition {
	t.Helper()
	objs, err := crds.Objects()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*apiextv1.CustomResourceDefinition{}
	for _, o := range objs {
		out[o.Spec.Names.Kind] = o
	}
	return out
}

func newTestCheck(t *testing.T, source crdSource, interval time.Duration) (*crdCheck, *record.FakeRecorder) {
	t.Helper()
	wants, err := wantedCRDs()
	if err != nil {
		t.Fatal(err)
	}
	rec := record.NewFakeRecorder(100)
	return &crdCheck{source: source, wants: wants, interval: interval, recorder: rec,
		target: eventTarget(Options{Namespace: "hf", Pod: PodRef{Name: "ctl-0", UID: "u-1"}}), gate: newCRDGate()}, rec
}

func TestCRDCheckTellsWhatIsServed(t *testing.T) {
	alphaDroplet, alphaKey := alphaCRD("Droplet", "droplets", "drop"), alphaCRD("Key", "keys")
	older := ours(t)["Droplet"].DeepCopy()
	status := older.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
	delete(status.Properties, "dropletID")
	kept := status.Properties["droplet"]
	kept.XPreserveUnknownFields = nil
	status.Properties["droplet"] = kept
	older.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"] = status
	noShortNames := ours(t)["Key"].DeepCopy()
	noShortNames.Spec.Names.ShortNames = nil

	for _, c := range []struct {
		name  string
		crds  []*apiextv1.CustomResourceDefinition
		setup func(*served)
		want  string
	}{
		{name: "this release's", crds: []*apiextv1.CustomResourceDefinition{ours(t)["Droplet"], ours(t)["Key"], ours(t)["WarmPool"]}},
		{name: "the alpha's", crds: []*apiextv1.CustomResourceDefinition{alphaDroplet, alphaKey},
			want: "the Droplet and Key CRDs served are the original alpha provisioner's; the WarmPool CRD is not served"},
		// kubectl apply --server-side without --force-conflicts: only the WarmPool CRD is applied.
		{name: "the alpha's and our WarmPool", crds: []*apiextv1.CustomResourceDefinition{alphaDroplet, alphaKey, ours(t)["WarmPool"]},
			want: "the Droplet and Key CRDs served are the original alpha provisioner's"},
		// Without OpenAPI v3 (Kubernetes before 1.24) only names tell.
		{name: "the alpha's, names only", crds: []*apiextv1.CustomResourceDefinition{alphaDroplet, alphaKey},
			setup: func(s *served) { s.unpublished = true },
			want:  "the Droplet CRD served is the original alpha provisioner's; the Key CRD served lacks the short names do-key, do-keys; the WarmPool CRD is not served"},
		{name: "this release's, names only", crds: []*apiextv1.CustomResourceDefinition{ours(t)["Droplet"], ours(t)["Key"], ours(t)["WarmPool"]},
			setup: func(s *served) { s.unpublished = true }},
		{name: "an older schema", crds: []*apiextv1.CustomResourceDefinition{older, ours(t)["Key"], ours(t)["WarmPool"]},
			want: "the Droplet CRD served lacks the fields status.dropletID, status.droplet (kept unpruned) this controller writes"},
		{name: "other short names", crds: []*apiextv1.CustomResourceDefinition{ours(t)["Droplet"], noShortNames, ours(t)["WarmPool"]},
			want: "the Key CRD served lacks the short names do-key, do-keys"},
		{name: "nothing", want: "the Droplet, Key and WarmPool CRDs are not served"},
		// Served, but the apiserver has not published the schemas yet.
		{name: "not yet published", crds: []*apiextv1.CustomResourceDefinition{ours(t)["Droplet"], ours(t)["Key"], ours(t)["WarmPool"]},
			setup: func(s *served) { s.schemas = nil },
			want:  "the Droplet, Key and WarmPool CRDs served have no published schema yet"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s served
			for _, crd := range c.crds {
				s.add(t, crd)
			}
			if c.setup != nil {
				c.setup(&s)
			}
			check, _ := newTestCheck(t, s, time.Second)
			st := check.evaluate(context.Background())
			if st.err != nil {
				t.Fatal(st.err)
			}
			if got := st.summary(); got != c.want {
				t.Errorf("summary:\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

// flipping serves before until flip is called, then after; it counts the checks.
type flipping struct {
	mu            sync.Mutex
	before, after crdSource
	flipped       bool
	checks        int
}

func (f *flipping) current() crdSource {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.flipped {
		return f.after
	}
	return f.before
}

func (f *flipping) flip() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.flipped = true
}

func (f *flipping) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.checks
}

// resources begins a check.
func (f *flipping) resources(ctx context.Context) (*metav1.APIResourceList, error) {
	f.mu.Lock()
	f.checks++
	f.mu.Unlock()
	return f.current().resources(ctx)
}

func (f *flipping) openAPI(ctx context.Context) ([]byte, bool, error) {
	return f.current().openAPI(ctx)
}

// failing answers every check with another error.
type failing struct {
	mu sync.Mutex
	n  int
}

func (f *failing) resources(context.Context) (*metav1.APIResourceList, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	return nil, errors.New("connection refused, attempt " + strings.Repeat("i", f.n))
}

func (f *failing) openAPI(context.Context) ([]byte, bool, error) { return nil, true, nil }

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 30s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCRDCheckSaysAMismatchOnceAndStartsOnceFixed(t *testing.T) {
	logs := logtest.NewGlobal()
	t.Cleanup(logs.Reset)
	var alpha, fixed served
	alpha.add(t, alphaCRD("Droplet", "droplets", "drop"))
	alpha.add(t, alphaCRD("Key", "keys"))
	for _, kind := range []string{"Droplet", "Key", "WarmPool"} {
		fixed.add(t, ours(t)[kind])
	}
	source := &flipping{before: alpha, after: fixed}
	check, rec := newTestCheck(t, source, 100*time.Millisecond)
	done := make(chan error, 1)
	go func() { done <- check.wait(context.Background()) }()

	var events []string
	waitUntil(t, "a Warning Event", func() bool { events = append(events, testutil.TakeEvents(rec)...); return len(events) > 0 })
	if err := check.gate.get(); err == nil || !strings.Contains(err.Error(), CRDsCommand) {
		t.Errorf("readiness %v, want not ready naming %q", err, CRDsCommand)
	}
	// Several checks later, still that one Event.
	seen := source.count()
	waitUntil(t, "more checks", func() bool { return source.count() >= seen+3 })
	source.flip()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("still waiting 30s after the CRDs were fixed")
	}
	events = append(events, testutil.TakeEvents(rec)...)
	if len(events) != 2 || !strings.HasPrefix(events[0], "Warning "+ReasonCRDsNotUpgraded+" ") ||
		!strings.Contains(events[0], CRDsCommand) || !strings.HasPrefix(events[1], "Normal "+ReasonCRDsUpgraded+" ") {
		t.Errorf("Events %q, want one Warning %s naming the command, then one Normal %s", events, ReasonCRDsNotUpgraded, ReasonCRDsUpgraded)
	}
	var lines []string
	for _, e := range logs.AllEntries() {
		if e.Level <= logrus.WarnLevel {
			lines = append(lines, e.Message)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], CRDsCommand) || !strings.Contains(lines[0], "original alpha provisioner's") {
		t.Errorf("warnings and errors logged: %q, want one line naming the alpha's CRDs and the command", lines)
	}
	if err := check.gate.get(); err != nil {
		t.Errorf("readiness after the fix: %v", err)
	}
}

// A mismatch that ends within the interval (CRDs just applied, published a
// moment later) is not reported.
func TestCRDCheckSaysNothingOfAMismatchThatPasses(t *testing.T) {
	logs := logtest.NewGlobal()
	t.Cleanup(logs.Reset)
	var missing, fixed served
	for _, kind := range []string{"Droplet", "Key", "WarmPool"} {
		fixed.add(t, ours(t)[kind])
	}
	source := &flipping{before: missing, after: fixed}
	// Checked again every 200 ms, reported after 3 s.
	check, rec := newTestCheck(t, source, 3*time.Second)
	done := make(chan error, 1)
	go func() { done <- check.wait(context.Background()) }()
	waitUntil(t, "a first check", func() bool { return source.count() >= 1 })
	source.flip()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("still waiting 30s after the CRDs were served")
	}
	if events := testutil.TakeEvents(rec); len(events) != 0 {
		t.Errorf("Events %q, want none", events)
	}
	for _, e := range logs.AllEntries() {
		if e.Level <= logrus.WarnLevel {
			t.Errorf("logged %s: %s", e.Level, e.Message)
		}
	}
}

// Errors vary from one attempt to the next but are one state: said once.
func TestCRDCheckSaysFailingChecksOnce(t *testing.T) {
	logs := logtest.NewGlobal()
	t.Cleanup(logs.Reset)
	source := &failing{}
	check, rec := newTestCheck(t, source, 50*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- check.wait(ctx) }()
	var events []string
	waitUntil(t, "a Warning Event", func() bool { events = append(events, testutil.TakeEvents(rec)...); return len(events) > 0 })
	waitUntil(t, "more checks", func() bool {
		source.mu.Lock()
		defer source.mu.Unlock()
		return source.n > 30
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("wait: %v, want context.Canceled", err)
	}
	events = append(events, testutil.TakeEvents(rec)...)
	if len(events) != 1 || !strings.HasPrefix(events[0], corev1.EventTypeWarning+" "+ReasonCRDCheckFailed+" ") {
		t.Errorf("Events %q, want one Warning %s", events, ReasonCRDCheckFailed)
	}
	if err := check.gate.get(); err == nil {
		t.Error("ready while the check fails")
	}
}

func TestEventTargetIsThePodOrElseTheLease(t *testing.T) {
	pod := eventTarget(Options{Namespace: "hf", LeaseName: "l", Pod: PodRef{Name: "p", UID: "u"}})
	if pod.Kind != "Pod" || pod.Name != "p" || pod.Namespace != "hf" || pod.UID != "u" {
		t.Errorf("in a pod: %+v", pod)
	}
	lease := eventTarget(Options{Namespace: "hf", LeaseName: "l"})
	if lease.Kind != "Lease" || lease.Name != "l" || lease.Namespace != "hf" {
		t.Errorf("outside a pod: %+v", lease)
	}
}
