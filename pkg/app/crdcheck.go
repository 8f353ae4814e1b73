package app

// Before any controller starts, the CRDs the apiserver serves for Droplet,
// Key and WarmPool must be this release's. Helm installs a chart's crds/ on
// the first install only, and the original alpha provisioner served the same
// CRD names (droplets and keys.provisioning.hobbyfarm.io, v1alpha1) with
// another schema: an upgrade whose CRD step was skipped, or failed, leaves the
// alpha's CRDs served. The controller then starts nothing and writes nothing,
// stays unready, says once (a log line and a Warning Event) what to run and
// why, and keeps checking: once the right CRDs are served it starts its
// controllers without a restart (a restart would add the kubelet's crash
// back-off, up to five minutes, to the fix).
//
// The chart grants no rights on CustomResourceDefinitions, so the check reads
// what every authenticated user may: the group version's discovery document
// (served kinds, short names, categories, status subresources; every
// Kubernetes version answers it) and, where the apiserver publishes it
// (OpenAPI v3: Kubernetes 1.24 and later), the group version's OpenAPI v3
// document, whose schemas must declare every field this controller writes and
// keep the alpha's records unpruned. Without OpenAPI v3 the names alone tell
// the alpha's CRDs (short name drop, none of ours) from this release's.
//
// The apiserver publishes a CRD change to discovery and OpenAPI a moment
// after the change: a mismatch is re-checked every second or so and reported
// only once it has lasted a whole check interval, so CRDs applied just before
// the start (or by --install-crds, which runs before the check) are not
// reported as missing.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/crds"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/events"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
)

const (
	// CRDsCommand applies this release's CRDs over whatever is served:
	// --server-side --force-conflicts takes over the fields that another
	// manager (the alpha's controller, Helm) owns.
	CRDsCommand = "kubectl apply --server-side --force-conflicts -f ./chart/hf-provisioner-digitalocean/crds/"
	// ReasonCRDsNotUpgraded: the CRDs served are not this release's.
	ReasonCRDsNotUpgraded = "CRDsNotUpgraded"
	// ReasonCRDsUpgraded: they are now, after a ReasonCRDsNotUpgraded.
	ReasonCRDsUpgraded = "CRDsUpgraded"
	// ReasonCRDCheckFailed: the apiserver did not answer the check.
	ReasonCRDCheckFailed = "CRDCheckFailed"
	// DefaultCRDCheckInterval is how often the CRDs are checked while they
	// are not this release's.
	DefaultCRDCheckInterval = 15 * time.Second
)

// alphaDropletShortName is the original alpha provisioner's short name for
// its Droplet CRD; none of this release's CRDs has it.
const alphaDropletShortName = "drop"

const provisioningGroupVersion = "provisioning.hobbyfarm.io/v1alpha1"

// crdSource is what the check reads from the apiserver.
type crdSource interface {
	// resources is the group version's discovery document; nil when the
	// group version is not served.
	resources(ctx context.Context) (*metav1.APIResourceList, error)
	// openAPI is the group version's OpenAPI v3 document. published is
	// false when the apiserver publishes no OpenAPI v3 this client may read;
	// doc is nil when it publishes none for the group version.
	openAPI(ctx context.Context) (doc []byte, published bool, err error)
}

// apiserverSource reads discovery and OpenAPI v3, both readable by every
// authenticated user (ClusterRole system:discovery).
type apiserverSource struct{ client discovery.DiscoveryInterface }

func (s apiserverSource) resources(context.Context) (*metav1.APIResourceList, error) {
	list, err := s.client.ServerResourcesForGroupVersion(provisioningGroupVersion)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return list, err
}

func (s apiserverSource) openAPI(context.Context) ([]byte, bool, error) {
	paths, err := s.client.OpenAPIV3().Paths()
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	gv, ok := paths["apis/"+provisioningGroupVersion]
	if !ok {
		return nil, true, nil
	}
	doc, err := gv.Schema(runtime.ContentTypeJSON)
	if apierrors.IsNotFound(err) {
		return nil, true, nil
	}
	return doc, true, err
}

// kindWant is what a CRD of this release serves for one kind.
type kindWant struct {
	kind, plural           string
	shortNames, categories []string
	status                 bool
	// fields are the schema's property paths (spec.virtualMachine,
	// status.conditions[].type); preserved are those whose unknown fields
	// are kept (the alpha's records).
	fields, preserved []string
}

// wantedCRDs describes this release's CRDs, from the definitions it installs.
func wantedCRDs() ([]kindWant, error) {
	objs, err := crds.Objects()
	if err != nil {
		return nil, err
	}
	var out []kindWant
	for _, obj := range objs {
		w := kindWant{kind: obj.Spec.Names.Kind, plural: obj.Spec.Names.Plural,
			shortNames: obj.Spec.Names.ShortNames, categories: obj.Spec.Names.Categories}
		for _, v := range obj.Spec.Versions {
			if obj.Spec.Group+"/"+v.Name != provisioningGroupVersion {
				continue
			}
			w.status = v.Subresources != nil && v.Subresources.Status != nil
			if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
				collectPaths(v.Schema.OpenAPIV3Schema, nil, &w)
			}
		}
		sort.Strings(w.fields)
		sort.Strings(w.preserved)
		out = append(out, w)
	}
	return out, nil
}

// collectPaths adds s's property paths below path to w. "[]" steps into an
// array's items, "{}" into a map's values.
func collectPaths(s *apiextv1.JSONSchemaProps, path []string, w *kindWant) {
	if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields && len(path) > 0 {
		w.preserved = append(w.preserved, joinPath(path))
	}
	for name, p := range s.Properties {
		if len(path) == 0 && (name == "apiVersion" || name == "kind" || name == "metadata") {
			continue // the apiserver's own, published by reference
		}
		child := append(slices.Clip(path), name)
		w.fields = append(w.fields, joinPath(child))
		collectPaths(&p, child, w)
	}
	if s.Items != nil && s.Items.Schema != nil {
		collectPaths(s.Items.Schema, append(slices.Clip(path), "[]"), w)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		collectPaths(s.AdditionalProperties.Schema, append(slices.Clip(path), "{}"), w)
	}
}

func joinPath(path []string) string {
	return strings.ReplaceAll(strings.ReplaceAll(strings.Join(path, "."), ".[]", "[]"), ".{}", "{}")
}

func splitPath(path string) []string {
	path = strings.ReplaceAll(strings.ReplaceAll(path, "[]", ".[]"), "{}", ".{}")
	return strings.Split(path, ".")
}

// openAPISchema is the part of a published schema the check reads.
type openAPISchema struct {
	Properties           map[string]*openAPISchema `json:"properties"`
	Items                *openAPISchema            `json:"items"`
	AdditionalProperties schemaOrBool              `json:"additionalProperties"`
	AllOf                []*openAPISchema          `json:"allOf"`
	PreserveUnknown      bool                      `json:"x-kubernetes-preserve-unknown-fields"`
	GVK                  []struct {
		Group, Version, Kind string
	} `json:"x-kubernetes-group-version-kind"`
}

// schemaOrBool is additionalProperties: a schema, or a bool (no schema).
type schemaOrBool struct{ schema *openAPISchema }

func (s *schemaOrBool) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '{' {
		s.schema = &openAPISchema{}
		return json.Unmarshal(data, s.schema)
	}
	return nil
}

// child is the schema one step below s, looking into allOf as well.
func (s *openAPISchema) child(step string) *openAPISchema {
	var c *openAPISchema
	switch step {
	case "[]":
		c = s.Items
	case "{}":
		c = s.AdditionalProperties.schema
	default:
		c = s.Properties[step]
	}
	if c != nil {
		return c
	}
	for _, sub := range s.AllOf {
		if c := sub.child(step); c != nil {
			return c
		}
	}
	return nil
}

func (s *openAPISchema) lookup(path string) *openAPISchema {
	for _, step := range splitPath(path) {
		if s = s.child(step); s == nil {
			return nil
		}
	}
	return s
}

// servedSchemas are the kinds' schemas in a group version's OpenAPI v3 document.
func servedSchemas(doc []byte) (map[string]*openAPISchema, error) {
	var parsed struct {
		Components struct {
			Schemas map[string]*openAPISchema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &parsed); err != nil {
		return nil, fmt.Errorf("reading the OpenAPI v3 document of %s: %w", provisioningGroupVersion, err)
	}
	out := map[string]*openAPISchema{}
	for _, s := range parsed.Components.Schemas {
		for _, gvk := range s.GVK {
			if gvk.Group+"/"+gvk.Version == provisioningGroupVersion {
				out[gvk.Kind] = s
			}
		}
	}
	return out, nil
}

// finding is what is wrong with the CRD of one or more kinds; what reads
// after "the Droplet CRD" (singular) or "the Droplet and Key CRDs" (plural).
type finding struct {
	kinds            []string
	singular, plural string
}

var (
	foundAlpha     = finding{singular: "served is the original alpha provisioner's", plural: "served are the original alpha provisioner's"}
	foundNotServed = finding{singular: "is not served", plural: "are not served"}
	foundNoSchema  = finding{singular: "served has no published schema yet", plural: "served have no published schema yet"}
	foundNoStatus  = finding{singular: "served has no status subresource", plural: "served have no status subresource"}
)

// maxMissingNamed is how many missing fields a message names.
const maxMissingNamed = 3

func lacks(what string) finding {
	return finding{singular: "served lacks " + what, plural: "served lack " + what}
}

// judge is what is wrong with the served kind w, or nil.
func (w kindWant) judge(list *metav1.APIResourceList, schemas map[string]*openAPISchema, published bool) *finding {
	var res *metav1.APIResource
	status := false
	if list != nil {
		for i, r := range list.APIResources {
			switch r.Name {
			case w.plural:
				res = &list.APIResources[i]
			case w.plural + "/status":
				status = true
			}
		}
	}
	if res == nil {
		return &foundNotServed
	}
	if slices.Contains(res.ShortNames, alphaDropletShortName) {
		return &foundAlpha
	}
	if published {
		s := schemas[w.kind]
		if s == nil {
			return &foundNoSchema
		}
		if s.PreserveUnknown && s.child("spec") == nil && s.child("status") == nil {
			return &foundAlpha // the alpha's schema declares no field at all
		}
		var missing []string
		for _, f := range w.fields {
			if s.lookup(f) == nil {
				missing = append(missing, f)
			}
		}
		for _, p := range w.preserved {
			if n := s.lookup(p); n != nil && !n.PreserveUnknown {
				missing = append(missing, p+" (kept unpruned)")
			}
		}
		if len(missing) > 0 {
			what := "the fields " + strings.Join(missing[:min(len(missing), maxMissingNamed)], ", ")
			if len(missing) > maxMissingNamed {
				what += fmt.Sprintf(" and %d more", len(missing)-maxMissingNamed)
			}
			f := lacks(what + " this controller writes")
			return &f
		}
	}
	if missing := without(w.shortNames, res.ShortNames); len(missing) > 0 {
		f := lacks("the short names " + strings.Join(missing, ", "))
		return &f
	}
	if missing := without(w.categories, res.Categories); len(missing) > 0 {
		f := lacks("the categories " + strings.Join(missing, ", "))
		return &f
	}
	if w.status && !status {
		return &foundNoStatus
	}
	return nil
}

// without is want's elements missing from have.
func without(want, have []string) []string {
	var out []string
	for _, w := range want {
		if !slices.Contains(have, w) {
			out = append(out, w)
		}
	}
	return out
}

// crdState is one check's result: findings, an error, or neither (all is well).
type crdState struct {
	findings []finding
	err      error
}

func (s crdState) ok() bool { return s.err == nil && len(s.findings) == 0 }

// key tells states apart, for saying each once: errors are one state
// whatever they say, for they vary from one attempt to the next.
func (s crdState) key() string {
	if s.err != nil {
		return "error"
	}
	return s.summary()
}

// summary says what is wrong, e.g. "the Droplet and Key CRDs served are the
// original alpha provisioner's; the WarmPool CRD is not served".
func (s crdState) summary() string {
	var parts []string
	for _, f := range s.findings {
		if len(f.kinds) == 1 {
			parts = append(parts, fmt.Sprintf("the %s CRD %s", f.kinds[0], f.singular))
			continue
		}
		names := strings.Join(f.kinds[:len(f.kinds)-1], ", ") + " and " + f.kinds[len(f.kinds)-1]
		parts = append(parts, fmt.Sprintf("the %s CRDs %s", names, f.plural))
	}
	return strings.Join(parts, "; ")
}

// message is the log line's and the Event's text: what is wrong, why it
// matters, and what to run.
func (s crdState) message(interval time.Duration) string {
	if s.err != nil {
		return fmt.Sprintf("Cannot check the CRDs served (checking again every %s): %v. This controller starts nothing "+
			"until it has found this release's Droplet, Key and WarmPool CRDs served.", interval, s.err)
	}
	summary := s.summary()
	return fmt.Sprintf("%s%s, so this controller starts nothing and writes nothing. Helm installs a chart's CRDs "+
		"on the first install only: apply this release's with `%s` (--force-conflicts takes over the fields "+
		"the alpha's controller or Helm manages). The controller starts by itself once they are served "+
		"(checking every %s).", strings.ToUpper(summary[:1]), summary[1:], CRDsCommand, interval)
}

// notReady is what /readyz says meanwhile.
func (s crdState) notReady() error {
	if s.err != nil {
		return fmt.Errorf("cannot check the CRDs served: %w", s.err)
	}
	return fmt.Errorf("%s: run %s", s.summary(), CRDsCommand)
}

// crdCheck waits until this release's CRDs are served.
type crdCheck struct {
	source crdSource
	wants  []kindWant
	// interval is how often a reported state is checked again, and how
	// long a new state must last before it is reported.
	interval time.Duration
	recorder record.EventRecorder
	// target is the object the Events are recorded on.
	target runtime.Object
	// gate answers /readyz until the check passes.
	gate *crdGate

	noteOpenAPI sync.Once
}

// settlePolls is how many times a new state is checked again within the
// interval it must last before it is reported.
const settlePolls = 15

// evaluate checks once.
func (c *crdCheck) evaluate(ctx context.Context) crdState {
	list, err := c.source.resources(ctx)
	if err != nil {
		return crdState{err: err}
	}
	var schemas map[string]*openAPISchema
	doc, published, err := c.source.openAPI(ctx)
	if err != nil {
		return crdState{err: err}
	}
	if !published {
		c.noteOpenAPI.Do(func() {
			logrus.Info("the apiserver publishes no OpenAPI v3 this controller may read: the CRDs served are checked by their names, not their schemas")
		})
	}
	if doc != nil {
		if schemas, err = servedSchemas(doc); err != nil {
			return crdState{err: err}
		}
	}
	var st crdState
	for _, w := range c.wants {
		f := w.judge(list, schemas, published)
		if f == nil {
			continue
		}
		if i := slices.IndexFunc(st.findings, func(g finding) bool { return g.singular == f.singular }); i >= 0 {
			st.findings[i].kinds = append(st.findings[i].kinds, w.kind)
			continue
		}
		g := *f
		g.kinds = []string{w.kind}
		st.findings = append(st.findings, g)
	}
	return st
}

// wait returns nil once this release's CRDs are served, or ctx's error.
func (c *crdCheck) wait(ctx context.Context) error {
	var (
		seen     string    // the last state's key
		since    time.Time // since when it has been seen
		reported string    // the last reported state's key
	)
	for {
		st := c.evaluate(ctx)
		if st.ok() {
			c.gate.set(nil)
			if reported != "" {
				msg := "The CRDs served are this release's: starting the controllers."
				logrus.WithField("reason", ReasonCRDsUpgraded).Info(msg)
				c.recorder.Event(c.target, corev1.EventTypeNormal, ReasonCRDsUpgraded, msg)
			}
			return nil
		}
		c.gate.set(st.notReady())
		if key := st.key(); key != seen {
			seen, since = key, time.Now()
		}
		if seen != reported && time.Since(since) >= c.interval {
			c.report(st)
			reported = seen
		}
		delay := c.interval
		if seen != reported {
			delay = c.interval / settlePolls
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
}

// report says st once: one log line and one Warning Event.
func (c *crdCheck) report(st crdState) {
	msg := st.message(c.interval)
	reason := ReasonCRDsNotUpgraded
	if st.err != nil {
		reason = ReasonCRDCheckFailed
	}
	logrus.WithField("reason", reason).Error(msg)
	c.recorder.Event(c.target, corev1.EventTypeWarning, reason, msg)
}

// crdGate holds /readyz's answer while the CRDs are checked.
type crdGate struct {
	mu  sync.Mutex
	err error
}

func newCRDGate() *crdGate { return &crdGate{err: errors.New("checking the CRDs served")} }

func (g *crdGate) set(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.err = err
}

func (g *crdGate) get() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// eventTarget is the object Events about the controller itself are recorded
// on: its own Pod, where operators look first (kubectl describe pod); outside
// a pod, the leader-election Lease's name in the namespace it serves (the
// Lease need not exist for kubectl get events to list the Event).
func eventTarget(opts Options) *corev1.ObjectReference {
	if opts.Pod.Name != "" {
		ns := opts.Pod.Namespace
		if ns == "" {
			ns = opts.Namespace
		}
		return &corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: opts.Pod.Name, UID: opts.Pod.UID}
	}
	return &corev1.ObjectReference{APIVersion: "coordination.k8s.io/v1", Kind: "Lease", Namespace: opts.Namespace, Name: opts.LeaseName}
}

// waitForCRDs returns once this release's CRDs are served, or ctx's error.
func waitForCRDs(ctx context.Context, opts Options, client kubernetes.Interface, gate *crdGate) error {
	wants, err := wantedCRDs()
	if err != nil {
		return err
	}
	target := eventTarget(opts)
	// Its own recorder, into the target's namespace, kept until ctx ends
	// so that the last Event is sent.
	check := &crdCheck{source: apiserverSource{client: client.Discovery()}, wants: wants, interval: opts.CRDCheckInterval,
		recorder: events.NewRecorder(ctx, client, target.Namespace), target: target, gate: gate}
	return check.wait(ctx)
}
