package alphatest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	"k8s.io/client-go/rest"
)

// chartCRDs is this project's CRDs as the chart ships them.
var chartCRDs = filepath.Join("..", "..", "..", "chart", "hf-provisioner-digitalocean", "crds")

// Over the alpha's CRDs, `kubectl apply --server-side` of the chart's CRDs
// conflicts with the alpha's field manager on the versions and the short
// names, and succeeds with --force-conflicts; the alpha's records in its
// objects are still served under the new schema.
func TestChartCRDsOverTheAlphasNeedForceConflicts(t *testing.T) {
	// Its own control plane: the CRDs it replaces are cluster-wide.
	env := testenv.New(t, testenv.Options{CRDs: testenv.HobbyFarmCRDs()})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for range 2 { // the alpha installs them at every start: a create, then updates
		if err := InstallCRDs(ctx, env.Config()); err != nil {
			t.Fatal(err)
		}
	}
	w := newWorld(t, env, newFake(t))
	p := w.provision("vm-1", VMOptions{})

	out, err := kubectl(t, env, "apply", "--server-side", "-f", chartCRDs)
	if err == nil {
		t.Fatalf("apply without --force-conflicts succeeded:\n%s", out)
	}
	t.Logf("apply without --force-conflicts:\n%s", out)
	for _, want := range []string{
		// Droplets
		"Apply failed with 2 conflicts: conflicts with \"hf-provisioner-digitalocean\" using apiextensions.k8s.io/v1:\n- .spec.versions\n- .spec.names.shortNames",
		// Keys, which the alpha gave no short names
		"Apply failed with 1 conflict: conflict with \"hf-provisioner-digitalocean\" using apiextensions.k8s.io/v1: .spec.versions",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("apply output lacks %q:\n%s", want, out)
		}
	}
	if out, err := kubectl(t, env, "apply", "--server-side", "--force-conflicts", "-f", chartCRDs); err != nil {
		t.Fatalf("apply --force-conflicts: %v\n%s", err, out)
	}

	waitServedColumn(t, env, w.ns, "droplets", "VM")
	waitServedColumn(t, env, w.ns, "keys", "ID")
	droplet, key := w.get(dropletsResource, p.DropletName), w.get(keysResource, p.KeyName)
	checks := []struct {
		what      string
		got, want any
	}{
		{"status.droplet.id", num(droplet, "status", "droplet", "id"), int64(p.DropletID)},
		{"spec.droplet.name", str(droplet, "spec", "droplet", "name"), p.DropletName},
		{"Droplet spec.machine", str(droplet, "spec", "machine"), p.VM},
		{"status.key.id", num(key, "status", "key", "id"), int64(p.KeyID)},
		{"spec.key.name", str(key, "spec", "key", "name"), p.KeyName},
		{"Key spec.secret", str(key, "spec", "secret"), p.SecretName},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v after the upgrade, want %v", c.what, c.got, c.want)
		}
	}
}

// kubectl runs kubectl against env only, with its own discovery cache.
func kubectl(t *testing.T, env *testenv.Env, args ...string) (string, error) {
	t.Helper()
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skipf("no kubectl: %v", err)
	}
	cmd := exec.Command(bin, append([]string{"--kubeconfig", env.KubeconfigPath, "--cache-dir", t.TempDir()}, args...)...)
	cmd.Env = image.EnvironWithout("KUBECONFIG")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.String(), err
}

// waitServedColumn waits until the apiserver serves resource with the
// printer column named column: the new CRD is in effect (the apiserver
// swaps a changed CRD's handler asynchronously).
func waitServedColumn(t *testing.T, env *testenv.Env, ns, resource, column string) {
	t.Helper()
	client, err := rest.HTTPClientFor(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("%s/apis/provisioning.hobbyfarm.io/v1alpha1/namespaces/%s/%s", env.Config().Host, ns, resource)
	testutil.Eventually(t, 30*time.Second, resource+" served with column "+column, func() string {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			return err.Error()
		}
		req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
		resp, err := client.Do(req)
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		var table struct {
			ColumnDefinitions []struct{ Name string } `json:"columnDefinitions"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&table); err != nil {
			return err.Error()
		}
		var names []string
		for _, c := range table.ColumnDefinitions {
			names = append(names, c.Name)
		}
		if !slices.Contains(names, column) {
			return fmt.Sprintf("columns %v", names)
		}
		return ""
	})
}
