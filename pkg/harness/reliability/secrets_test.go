package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/sirupsen/logrus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// captureLogs sends logrus (the controller's and wrangler's log) at debug
// level to a buffer, and to stderr as well when the test runs with -v.
func captureLogs(t *testing.T) *testutil.SyncBuffer {
	buf := &testutil.SyncBuffer{}
	prevOut, prevLevel := logrus.StandardLogger().Out, logrus.GetLevel()
	var out io.Writer = buf
	if testing.Verbose() {
		out = io.MultiWriter(buf, os.Stderr)
	}
	logrus.SetOutput(out)
	logrus.SetLevel(logrus.DebugLevel)
	t.Cleanup(func() {
		logrus.SetOutput(prevOut)
		logrus.SetLevel(prevLevel)
	})
	return buf
}

// secretScan is one place a secret must never be: its name and text.
type secretScan struct {
	where, text string
}

// TestNoSecretsInLogsEventsOrObjects runs VMs with a plain-text token in
// environment_specifics, VMs with token-secret, and a VM whose plain-text
// token DigitalOcean rejects, under some injected faults so the error paths
// log too. No log line, Event, Droplet, Key or VM may then contain a token or
// a private key.
func TestNoSecretsInLogsEventsOrObjects(t *testing.T) {
	logs := captureLogs(t)
	w := newWorld(t, worldOptions{})
	plainToken, rejectedToken := newToken(), newToken()
	w.do.AddAccount(plainToken, fakedo.AccountOptions{DropletLimit: 50})
	w.do.SetFaults(fakedo.Faults{Rules: map[string]fakedo.FaultRule{fakedo.AnyRoute: {ErrorRate: 0.15, DropResponseAfterApply: 0.05}}})
	secrets := map[string]string{
		"the token-secret token": w.token, "the plain-text token": plainToken, "the rejected token": rejectedToken,
		"a private key": "PRIVATE KEY",
	}

	plain := w.env("plain", map[string]string{"region": "nyc1", "token": plainToken})
	viaSecret := w.standardEnv("via-secret")
	rejected := w.env("rejected", map[string]string{"region": "nyc1", "token": rejectedToken})
	names := append(w.createVMs(plain, "plain", 2), w.createVMs(viaSecret, "secret", 2)...)
	w.createVMs(rejected, "rejected", 1)
	w.waitRunning(60*time.Second, names...)
	w.eventually(30*time.Second, "rejected token reported", func() string {
		k, err := w.keys.Get(w.ns, "rejected-00", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if v1alpha1.Created.GetReason(k) != "Unauthorized" {
			return "Key Created reason " + v1alpha1.Created.GetReason(k)
		}
		return ""
	})

	// The scan must be able to see a secret: the VM's copy of the plain-text
	// token and its key pair are where they belong.
	tokenCopy, err := w.hf.Secrets.Get(w.ns, "plain-00-do-token", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	keyPair, err := w.hf.Secrets.Get(w.ns, "plain-00-ssh", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	control := fmt.Sprintf("%s %s", tokenCopy.Data["token"], keyPair.Data["private_key"])
	for what, s := range map[string]string{"plain-text token": plainToken, "private key": "PRIVATE KEY"} {
		if !strings.Contains(control, s) {
			t.Fatalf("control: the %s is not in its Secret; the scan would see nothing", what)
		}
	}

	// And the scan must see the log: a canary logged here must be found.
	canary := newToken()
	logrus.WithField("canary", canary).Info("secrets scan canary")
	if !strings.Contains(logs.String(), canary) {
		t.Fatal("control: the log capture does not see logrus output")
	}

	scan := func(phase string) {
		t.Helper()
		places := w.secretPlaces(logs)
		found := 0
		for _, p := range places {
			for what, s := range secrets {
				i := strings.Index(p.text, s)
				if i < 0 {
					continue
				}
				if found++; found <= 10 {
					// Redacted, so the test's own output does not spread it.
					context := p.text[max(0, i-80):min(len(p.text), i+len(s)+20)]
					t.Errorf("%s: %s found in %s: …%s…", phase, what, p.where, strings.ReplaceAll(context, s, "«"+what+"»"))
				}
			}
		}
		if found > 10 {
			t.Errorf("%s: %d places in all hold a secret", phase, found)
		}
		t.Logf("%s: scanned %d places (%d bytes of logs)", phase, len(places), len(logs.String()))
	}
	scan("while running")

	w.deleteVMs(names...)
	w.eventually(60*time.Second, "VMs deleted", func() string {
		if d, k := len(w.do.Droplets(w.token))+len(w.do.Droplets(plainToken)), len(w.do.Keys(w.token))+len(w.do.Keys(plainToken)); d+k > 0 {
			return fmt.Sprintf("%d droplets, %d keys left", d, k)
		}
		for _, n := range names {
			if _, err := w.hf.VMs.Get(w.ns, n, metav1.GetOptions{}); err == nil {
				return n + " still exists"
			}
		}
		return ""
	})
	time.Sleep(time.Second) // let the last Events be written
	scan("after deletion")
}

// secretPlaces is every log line, every Event in the namespace and every
// VM, Droplet and Key (as JSON).
func (w *world) secretPlaces(logs *testutil.SyncBuffer) []secretScan {
	w.t.Helper()
	var out []secretScan
	for i, line := range strings.Split(logs.String(), "\n") {
		out = append(out, secretScan{fmt.Sprintf("log line %d", i+1), line})
	}
	asJSON := func(where string, obj any) {
		b, err := json.Marshal(obj)
		if err != nil {
			w.t.Fatal(err)
		}
		out = append(out, secretScan{where, string(b)})
	}
	events, err := w.kube.CoreV1().Events(w.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	for _, e := range events.Items {
		asJSON("Event "+e.Name, e)
	}
	vms, err := w.hf.VMs.List(w.ns, metav1.ListOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	for _, vm := range vms.Items {
		asJSON("VM "+vm.Name, vm)
	}
	drops, err := w.drops.List(w.ns, metav1.ListOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	for _, d := range drops.Items {
		asJSON("Droplet "+d.Name, d)
	}
	keys, err := w.keys.List(w.ns, metav1.ListOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	for _, k := range keys.Items {
		asJSON("Key "+k.Name, k)
	}
	if len(events.Items) == 0 {
		w.t.Error("no Events in the namespace: the scan of Events saw nothing")
	}
	return out
}
