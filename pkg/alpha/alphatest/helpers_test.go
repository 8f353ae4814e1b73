package alphatest

import (
	"context"
	"sync"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/sshprobe"
	"golang.org/x/crypto/ssh"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

const testToken = "dop_v1_alpha-token"

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{CRDs: testenv.HobbyFarmCRDs()})
}

var installShared sync.Once

// sharedEnv is the package's control plane with the alpha's CRDs installed
// as the alpha installs them.
func sharedEnv(t *testing.T) *testenv.Env {
	t.Helper()
	env := testenv.Require(t)
	var err error
	installShared.Do(func() { err = InstallCRDs(context.Background(), env.Config()) })
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// world is one test's namespace, Gargantua objects and fake DigitalOcean.
type world struct {
	t      *testing.T
	ns     string
	do     *fakedo.Server
	hf     *gargantuasim.Clients
	dyn    dynamic.Interface
	writer Writer
	env    *hfv1.Environment
}

func newWorld(t *testing.T, env *testenv.Env, do *fakedo.Server) *world {
	t.Helper()
	w := &world{t: t, ns: env.NewNamespace(t), do: do}
	var err error
	if w.hf, err = gargantuasim.NewClients(env.Config()); err != nil {
		t.Fatal(err)
	}
	if w.dyn, err = dynamic.NewForConfig(env.Config()); err != nil {
		t.Fatal(err)
	}
	w.writer = Writer{Config: env.Config(), APIURL: do.URL(), Token: testToken}
	if _, err := w.hf.Secrets.Create(gargantuasim.TokenSecret(w.ns, "do-token", testToken)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hf.Templates.Create(gargantuasim.Template(w.ns, "ubuntu", "ubuntu-22-04-x64", nil)); err != nil {
		t.Fatal(err)
	}
	w.env, err = w.hf.Envs.Create(gargantuasim.Environment(w.ns, "env",
		map[string]string{"region": "nyc1", "token-secret": "do-token"},
		map[string]map[string]string{"ubuntu": {"size": "s-1vcpu-1gb", "image": "ubuntu-22-04-x64"}}))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// newFake is a fake DigitalOcean whose droplets serve SSH.
func newFake(t *testing.T) *fakedo.Server {
	t.Helper()
	do := fakedo.New(fakedo.Options{SSH: true, BootDelay: 300 * time.Millisecond})
	if err := do.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(do.Close)
	do.AddAccount(testToken, fakedo.AccountOptions{DropletLimit: 100})
	return do
}

// provision makes a VM as Gargantua does and provisions it as the alpha did.
func (w *world) provision(name string, opts VMOptions) *Provisioned {
	w.t.Helper()
	vm, err := w.hf.CreateVM(w.ns, name, w.env, "ubuntu", "digitalocean")
	if err != nil {
		w.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := Provision(ctx, w.writer, vm, opts)
	if err != nil {
		w.t.Fatal(err)
	}
	return p
}

func (w *world) get(gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
	w.t.Helper()
	u, err := w.dyn.Resource(gvr).Namespace(w.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return u
}

// login logs in to the droplet with privateKeyPEM, as Gargantua's shell
// would, once its sshd answers, and returns the probe's reason.
func (w *world) login(p *Provisioned, privateKeyPEM []byte) string {
	w.t.Helper()
	signer, err := ssh.ParsePrivateKey(privateKeyPEM)
	if err != nil {
		w.t.Fatal(err)
	}
	var result sshprobe.Result
	testutil.Eventually(w.t, 30*time.Second, "droplet's sshd answers", func() string {
		addr, ok := w.do.SSHAddr(testToken, p.DropletID)
		if !ok {
			return "no SSH address yet"
		}
		result = sshprobe.Probe(context.Background(), sshprobe.Target{Addr: addr, User: "root", Signer: signer}, 10*time.Second)
		if result.Reason == sshprobe.ReasonUnreachable {
			return result.Message
		}
		return ""
	})
	return result.Reason
}

// keysNamed are the fake account's keys of that name.
func (w *world) keysNamed(name string) map[int]string {
	out := map[int]string{}
	for _, k := range w.do.Keys(testToken) {
		if k.Name == name {
			out[k.ID] = k.Fingerprint
		}
	}
	return out
}

// str is a string field of an object, "" when absent.
func str(u *unstructured.Unstructured, fields ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, fields...)
	return s
}

// num is a number field of an object, 0 when absent.
func num(u *unstructured.Unstructured, fields ...string) int64 {
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, fields...)
	switch v := v.(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	}
	return 0
}
