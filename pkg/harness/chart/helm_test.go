package chart

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"go/build"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// helmMissing is what a test says when it cannot find helm.
const helmMissing = "helm not found: run scripts/prereqs"

// chartRel is the chart's path from this package's directory.
const chartRel = "../../../chart/hf-provisioner-digitalocean"

var (
	helmOnce sync.Once
	helmPath string
	helmErr  error
)

// helmBin returns the helm binary, failing the test when there is none.
func helmBin(t testing.TB) string {
	t.Helper()
	helmOnce.Do(func() { helmPath, helmErr = findHelm() })
	if helmErr != nil {
		t.Fatalf("%s (%v)", helmMissing, helmErr)
	}
	return helmPath
}

// findHelm looks at $HELM_BIN, then PATH, then $(go env GOPATH)/bin.
func findHelm() (string, error) {
	if p := os.Getenv("HELM_BIN"); p != "" {
		if err := isExecutable(p); err != nil {
			return "", fmt.Errorf("HELM_BIN=%s: %w", p, err)
		}
		return p, nil
	}
	if p, err := exec.LookPath("helm"); err == nil {
		return p, nil
	}
	var tried []string
	for _, dir := range filepath.SplitList(goPath()) {
		p := filepath.Join(dir, "bin", "helm")
		if isExecutable(p) == nil {
			return p, nil
		}
		tried = append(tried, p)
	}
	return "", fmt.Errorf("not in HELM_BIN, PATH or %s", strings.Join(tried, ", "))
}

func isExecutable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return errors.New("not an executable file")
	}
	return nil
}

func goPath() string {
	if out, err := exec.Command(goBin(), "env", "GOPATH").Output(); err == nil {
		if p := strings.TrimSpace(string(out)); p != "" {
			return p
		}
	}
	return build.Default.GOPATH
}

// goBin is the go command that runs these tests.
func goBin() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(build.Default.GOROOT, "bin", "go")
}

func chartDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(chartRel)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func testdata(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runHelm runs helm with its own empty config, cache and data dirs, and no
// kubeconfig unless args pass one, so the user's setup never leaks in.
func runHelm(t testing.TB, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	bin := helmBin(t)
	home := t.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(image.EnvironWithout("KUBECONFIG", "HELM_"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
		"KUBECONFIG="+filepath.Join(home, "no-kubeconfig"),
	)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// mustHelm runs helm and fails the test on error, showing its stderr.
func mustHelm(t testing.TB, args ...string) string {
	t.Helper()
	out, errOut, err := runHelm(t, args...)
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// manifest is one rendered object: its YAML as helm printed it and the object.
type manifest struct {
	YAML []byte
	Obj  *unstructured.Unstructured
}

func (m manifest) String() string {
	return m.Obj.GetKind() + " " + m.Obj.GetNamespace() + "/" + m.Obj.GetName()
}

// into decodes the manifest strictly into a typed API object, so a field the
// API type does not have (a typo in a template) fails the test.
func (m manifest) into(t testing.TB, out any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(m.YAML, out); err != nil {
		t.Fatalf("%s: decode as %T: %v\n%s", m, out, err, m.YAML)
	}
}

// render runs helm template for a release in a namespace and returns its objects.
func render(t testing.TB, release, namespace string, args ...string) []manifest {
	t.Helper()
	all := append([]string{"template", release, chartDir(t), "--namespace", namespace}, args...)
	return parseManifests(t, mustHelm(t, all...))
}

// renderErr runs helm template expecting failure and returns its error output.
func renderErr(t testing.TB, args ...string) string {
	t.Helper()
	all := append([]string{"template", "t", chartDir(t), "--namespace", "ns"}, args...)
	out, errOut, err := runHelm(t, all...)
	if err == nil {
		t.Fatalf("helm %s succeeded, want an error; it rendered:\n%s", strings.Join(all, " "), out)
	}
	return errOut
}

func parseManifests(t testing.TB, out string) []manifest {
	t.Helper()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(out)))
	var ms []manifest
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("split helm output: %v", err)
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatalf("rendered YAML does not parse: %v\n%s", err, doc)
		}
		if s := strings.TrimSpace(string(js)); s == "null" || s == "" {
			continue // a document of only comments
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(js); err != nil {
			t.Fatalf("rendered document is not an object: %v\n%s", err, doc)
		}
		ms = append(ms, manifest{YAML: doc, Obj: obj})
	}
	if len(ms) == 0 {
		t.Fatalf("helm rendered no objects:\n%s", out)
	}
	return ms
}

// isHook: helm makes the object only at its hook's event (the uninstall's
// drain), never at install.
func (m manifest) isHook() bool {
	_, ok := m.Obj.GetAnnotations()["helm.sh/hook"]
	return ok
}

// only returns the one manifest of a kind that helm installs (no hook), failing
// unless there is exactly one.
func only(t testing.TB, ms []manifest, kind string) manifest {
	t.Helper()
	return onlyOf(t, ms, kind, false)
}

// onlyHook returns the one hook manifest of a kind.
func onlyHook(t testing.TB, ms []manifest, kind string) manifest {
	t.Helper()
	return onlyOf(t, ms, kind, true)
}

func onlyOf(t testing.TB, ms []manifest, kind string, hook bool) manifest {
	t.Helper()
	var found []manifest
	for _, m := range ms {
		if m.Obj.GetKind() == kind && m.isHook() == hook {
			found = append(found, m)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want exactly one %s (hook: %v), got %d: %v", kind, hook, len(found), kinds(ms))
	}
	return found[0]
}

func kinds(ms []manifest) []string {
	var ks []string
	for _, m := range ms {
		ks = append(ks, m.Obj.GetKind())
	}
	return ks
}
