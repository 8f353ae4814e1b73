package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// One step, one Event and one log line: a Key's creation, a VM's deletion.
func TestOneStepOneEventAndOneLogLine(t *testing.T) {
	logs := captureLogLines(t)
	w := newWorld(t, worldOptions{})
	env := w.standardEnv("env")
	w.createVM("once", env, "ubuntu")
	w.waitRunning("once")

	if n := w.eventCount("Key", "once", "Normal Created: "); n != 1 {
		t.Errorf("%d Created Events on the Key, want 1: %q", n, w.events("Key", "once"))
	}
	if n := w.eventCount("VirtualMachine", "once", "Normal Created: SSH key"); n != 1 {
		t.Errorf("%d Created Events for the key on the VM, want 1: %q", n, w.vmEvents("once"))
	}

	// Its key retired first (one delete, its log line), the VM's deletion
	// waits for nothing of the key's.
	w.waitKeyRetired("once")
	w.deleteVMWithin("once", 30*time.Second)
	for _, line := range []string{"VM deleted; deleting its droplet", "droplet deleted in DigitalOcean", "SSH key deleted in DigitalOcean",
		"droplet and key are gone from DigitalOcean; releasing VM"} {
		if n := logs.count("once", line); n != 1 {
			t.Errorf("%d log lines %q for the VM, want 1", n, line)
		}
	}
	if n := w.eventCount("VirtualMachine", "once", "Normal Deleting: "); n != 1 {
		t.Errorf("%d Deleting Events on the VM, want 1: %q", n, w.vmEvents("once"))
	}
	if dups := logs.repeated("once"); len(dups) > 0 {
		t.Errorf("log lines repeated for the VM: %q", dups)
	}
	for _, kind := range []string{"VirtualMachine", "Droplet", "Key"} {
		if dups := w.repeatedEvents(kind, "once"); len(dups) > 0 {
			t.Errorf("Events repeated on the %s: %q", kind, dups)
		}
	}
}

// repeatedEvents lists the Events on an object recorded more than once.
func (w *world) repeatedEvents(kind, name string) []string {
	w.t.Helper()
	var out []string
	for _, e := range w.events(kind, name) {
		if n := w.eventCount(kind, name, e); n > 1 {
			out = append(out, fmt.Sprintf("%dx %s", n, e))
		}
	}
	return out
}

// An Environment that breaks while VMs run does not flood them: a running
// VM gets no Warning Event and its Droplet no Configured=False; a VM
// still waiting for the config gets both.
func TestBrokenEnvironmentSparesRunningVMs(t *testing.T) {
	w := newWorld(t, worldOptions{})
	env := w.standardEnv("env-b")
	w.createVM("running", env, "ubuntu")
	w.waitRunning("running")
	warnings := func() int32 { return w.eventCount("VirtualMachine", "running", corev1.EventTypeWarning+" ") }
	before := warnings()

	// Garbage region and the token Secret gone.
	w.setSpecifics(env.Name, map[string]string{"region": "Mars 1", "token-secret": tokenSecret})
	if err := w.hf.Secrets.Delete(w.ns, tokenSecret, nil); err != nil {
		t.Fatal(err)
	}
	w.createVM("pending", env, "ubuntu")
	w.eventually(30*time.Second, "the pending VM told", func() string {
		d, err := w.droplets.Get(w.ns, "pending", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if !v1alpha1.Configured.IsFalse(d) {
			return "pending Droplet not Configured=False"
		}
		if events := w.vmEvents("pending"); !hasEvent(events, "Warning InvalidConfig: ") {
			return fmt.Sprintf("pending VM events %q", events)
		}
		return ""
	})
	w.consistently(5*time.Second, "the running VM left alone", func() string {
		if n := warnings(); n != before {
			return fmt.Sprintf("%d new Warning Events on the running VM: %q", n-before, w.vmEvents("running"))
		}
		if d := w.droplet("running"); v1alpha1.Configured.IsFalse(d) {
			return "running Droplet Configured=False: " + v1alpha1.Configured.GetMessage(d)
		}
		if s := w.vm("running").Status.Status; s != hfv1.VmStatusRunning {
			return fmt.Sprintf("running VM is %q", s)
		}
		return ""
	})
}

// logLines collects the controller's log entries while a test runs.
type logLines struct {
	mu      sync.Mutex
	entries []logLine
}

// logLine is a copy: logrus reuses its entries.
type logLine struct {
	level   logrus.Level
	vm      interface{}
	message string
	fields  string
}

func (l *logLines) Levels() []logrus.Level { return logrus.AllLevels }

func (l *logLines) Fire(e *logrus.Entry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, logLine{level: e.Level, vm: e.Data["vm"], message: e.Message, fields: fmt.Sprint(e.Data)})
	return nil
}

// captureLogLines hooks into logrus until the test ends. VM names are
// unique per test, so other tests' lines do not count.
func captureLogLines(t *testing.T) *logLines {
	l := &logLines{}
	logger := logrus.StandardLogger()
	logger.AddHook(l)
	t.Cleanup(func() {
		hooks := logrus.LevelHooks{}
		for level, list := range logger.Hooks {
			for _, h := range list {
				if h != logrus.Hook(l) {
					hooks[level] = append(hooks[level], h)
				}
			}
		}
		logger.ReplaceHooks(hooks)
	})
	return l
}

// count is how many entries about vm have message.
func (l *logLines) count(vm, message string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, e := range l.entries {
		if e.vm == vm && e.message == message {
			n++
		}
	}
	return n
}

// repeated lists the Info and Warning lines about vm logged more than once
// with the same fields.
func (l *logLines) repeated(vm string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[string]int{}
	for _, e := range l.entries {
		if e.vm != vm || e.level > logrus.InfoLevel {
			continue
		}
		line := fmt.Sprintf("%s %s %s", e.level, e.message, e.fields)
		seen[line]++
	}
	var out []string
	for line, n := range seen {
		if n > 1 {
			out = append(out, fmt.Sprintf("%dx %s", n, strings.TrimSpace(line)))
		}
	}
	return out
}
