package chart

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// The operator reads the docs, not the schema: every chart value they name must be
// one the chart takes, or following them fails `helm install` (the schema refuses
// unknown keys).

// docFiles are the documents an operator reads, relative to the repository root.
func docFiles(t *testing.T) []string {
	t.Helper()
	root := filepath.Join(chartDir(t), "..", "..")
	files := []string{
		filepath.Join(root, "README.md"),
		filepath.Join(chartDir(t), "README.md"),
		filepath.Join(chartDir(t), "templates", "NOTES.txt"),
	}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if changelog := filepath.Join(root, "CHANGELOG.md"); fileExists(changelog) {
		files = append(files, changelog)
	}
	return append(files, docs...)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

var (
	// "chart value `x`" and "chart values `x`" name a value whatever its shape.
	chartValuePhrase = regexp.MustCompile("chart values? `([^`]+)`")
	// A backticked dotted lowerCamel path (metrics.port, probes.enabled=true) names a
	// value when its first segment is a top-level value; Go names (digitalocean.CreateSettle)
	// have an upper-case segment and are not values.
	dottedPath = regexp.MustCompile("`([a-z][A-Za-z0-9]*(?:\\.[a-z][A-Za-z0-9]*)+)(?:[=:][^`]*)?`")
)

func TestDocsNameOnlyRealChartValues(t *testing.T) {
	schema := readSchema(t)
	topLevel := schema.properties()
	for _, file := range docFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			var named []string
			for _, m := range chartValuePhrase.FindAllStringSubmatch(line, -1) {
				named = append(named, strings.TrimSpace(strings.FieldsFunc(m[1], func(r rune) bool { return r == ':' || r == '=' || r == ' ' })[0]))
			}
			for _, m := range dottedPath.FindAllStringSubmatch(line, -1) {
				if _, ok := topLevel[strings.Split(m[1], ".")[0]]; ok {
					named = append(named, m[1])
				}
			}
			for _, path := range named {
				if !schema.has(path) {
					t.Errorf("%s:%d names chart value %q, which values.schema.json does not have", filepath.Base(file), i+1, path)
				}
			}
		}
	}
}

// jsonSchema is the part of values.schema.json that says which keys exist.
type jsonSchema struct {
	root map[string]any
}

func readSchema(t *testing.T) jsonSchema {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(chartDir(t), "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	return jsonSchema{root: root}
}

func (s jsonSchema) properties() map[string]any {
	props, _ := s.root["properties"].(map[string]any)
	return props
}

// has reports whether the dotted path is a key the schema allows.
func (s jsonSchema) has(path string) bool {
	node := s.root
	for _, key := range strings.Split(path, ".") {
		node = s.resolve(node)
		if props, ok := node["properties"].(map[string]any); ok {
			if next, ok := props[key].(map[string]any); ok {
				node = next
				continue
			}
		}
		// A map of free keys (annotations, labels, resource lists) takes any key.
		next, ok := node["additionalProperties"].(map[string]any)
		if !ok {
			return false
		}
		node = next
	}
	return true
}

// resolve follows a local "$ref" to its definition.
func (s jsonSchema) resolve(node map[string]any) map[string]any {
	ref, ok := node["$ref"].(string)
	if !ok {
		return node
	}
	defs, _ := s.root["definitions"].(map[string]any)
	def, _ := defs[strings.TrimPrefix(ref, "#/definitions/")].(map[string]any)
	return def
}

// TestDocsListEveryCRD: wherever a document lists our CRDs by kind ("the Droplet and
// Key CRDs"), it lists every kind the chart's crds/ folder installs.
func TestDocsListEveryCRD(t *testing.T) {
	kinds := crdKinds(t)
	alt := strings.Join(kinds, "|")
	listing := regexp.MustCompile("(?:" + alt + ")(?:(?:, | and |, and )(?:" + alt + "))* CRDs")
	files := append(docFiles(t), filepath.Join(chartDir(t), "values.yaml"), filepath.Join(chartDir(t), "..", "..", "main.go"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		// Lines of a comment block read as one text.
		text := strings.Join(strings.Fields(regexp.MustCompile(`\n\s*(#|//)`).ReplaceAllString(string(data), " ")), " ")
		for _, l := range listing.FindAllString(text, -1) {
			for _, k := range kinds {
				if !regexp.MustCompile(`\b` + k + `\b`).MatchString(l) {
					t.Errorf("%s: %q leaves out the %s CRD", filepath.Base(file), l, k)
				}
			}
		}
	}
}

// crdKinds are the kinds of the CRDs in the chart's crds/ folder.
func crdKinds(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chartDir(t), "crds", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in crds/: %v", err)
	}
	var kinds []string
	for _, f := range files {
		var crd apiextensionsv1.CustomResourceDefinition
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		kinds = append(kinds, crd.Spec.Names.Kind)
	}
	return kinds
}

// supportedGargantuas is how every document names the newest supported Gargantua line.
const supportedGargantuas = "v3.1.0 to v3.3.x"

// TestDocsStateOneGargantuaRange: a range of Gargantua releases from v3.1 on is always
// the supported one, in the same words, so no document promises more or less.
func TestDocsStateOneGargantuaRange(t *testing.T) {
	rangeFromV31 := regexp.MustCompile(`v3\.1(?:\.[0-9]+)?(?:\s*(?:to|–|-)\s*v3\.3(?:\.[0-9x]+)?|\s+and later|\+)`)
	files := append(docFiles(t), filepath.Join(chartDir(t), "..", "..", "pkg", "harness", "playground", "cmd", "usage.txt"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(string(data)), " ")
		for _, m := range rangeFromV31.FindAllString(text, -1) {
			if m != supportedGargantuas {
				t.Errorf("%s says %q; the supported range is %q", filepath.Base(file), m, supportedGargantuas)
			}
		}
	}
}

// TestChangelogCoversTheChartVersion: CHANGELOG.md, which the chart README's Upgrading
// points to, has an Unreleased section and one for the chart's version.
func TestChangelogCoversTheChartVersion(t *testing.T) {
	changelog, err := os.ReadFile(filepath.Join(chartDir(t), "..", "..", "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		Version string `json:"version"`
	}
	data, err := os.ReadFile(filepath.Join(chartDir(t), "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &chart); err != nil {
		t.Fatal(err)
	}
	for _, heading := range []string{"## [Unreleased]", "## [" + chart.Version + "]"} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(heading)).Match(changelog) {
			t.Errorf("CHANGELOG.md has no %q section", heading)
		}
	}
}
