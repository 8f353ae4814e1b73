package pass

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/godo"
	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	"github.com/sirupsen/logrus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

// keys is a Kind over Keys that records what the Kit asked of it.
type keys struct {
	writeErr  error
	writes    int
	stamped   int
	requeued  []time.Duration
	forgotten int
	vm        *hfv1.VirtualMachine
}

func (*keys) Status(k *v1alpha1.Key) any { return k.Status }
func (s *keys) Stamp(*v1alpha1.Key)      { s.stamped++ }
func (*keys) BeforeWrite(*v1alpha1.Key)  {}
func (s *keys) UpdateStatus(k *v1alpha1.Key) (*v1alpha1.Key, error) {
	if s.writeErr != nil {
		return nil, s.writeErr
	}
	s.writes++
	return k, nil
}
func (*keys) Written(*v1alpha1.Key) {}
func (s *keys) EnqueueAfter(_ *v1alpha1.Key, after time.Duration) {
	s.requeued = append(s.requeued, after)
}
func (*keys) Log(k *v1alpha1.Key) *logrus.Entry { return logrus.WithField("vm", k.Name) }
func (s *keys) AlsoTold(*v1alpha1.Key, bool) []runtime.Object {
	return []runtime.Object{s.vm}
}
func (*keys) Origin(k *v1alpha1.Key) digitalocean.Origin {
	return digitalocean.Origin{Environment: "env", TokenSecret: "do-token"}
}
func (*keys) Setting(*v1alpha1.Key, string) string { return "" }
func (s *keys) Forget(*v1alpha1.Key)               { s.forgotten++ }

func newKey() *v1alpha1.Key {
	return &v1alpha1.Key{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm-1", UID: "uid-1"}}
}

// A pass's Events are recorded only once the status write that records
// its conditions went through: a failed write records none, and its retry
// records them then.
func TestEventsWaitForTheStatusWrite(t *testing.T) {
	rec := record.NewFakeRecorder(10)
	kind := &keys{writeErr: errors.New("conflict")}
	kit := New[*v1alpha1.Key]("Key", kind, rec)

	orig := newKey()
	k := orig.DeepCopy()
	kit.Transition(k, v1alpha1.Created, true, "Registered", "SSH key 1 registered")
	if got, err := kit.Finish(orig, k, time.Minute); err == nil || got != orig {
		t.Fatalf("a failed write returned (%v, %v), want the original and the error", got, err)
	}
	if e := testutil.TakeEvents(rec); len(e) != 0 || len(kind.requeued) != 0 {
		t.Fatalf("after a failed write: Events %q, re-queues %v; want none (the retry records them)", e, kind.requeued)
	}

	kind.writeErr = nil
	k = orig.DeepCopy()
	kit.Transition(k, v1alpha1.Created, true, "Registered", "SSH key 1 registered")
	if _, err := kit.Finish(orig, k, time.Minute); err != nil {
		t.Fatal(err)
	}
	if e := testutil.TakeEvents(rec); len(e) != 1 || !strings.Contains(e[0], "Registered") {
		t.Fatalf("Events %q, want the one transition", e)
	}
	if kind.writes != 1 || len(kind.requeued) != 1 || kind.requeued[0] != time.Minute {
		t.Fatalf("writes %d, re-queues %v; want one write and one re-queue after 1m", kind.writes, kind.requeued)
	}
}

// An unchanged status is not written, but still stamped and re-queued.
func TestUnchangedStatusIsNotWritten(t *testing.T) {
	kind := &keys{}
	kit := New[*v1alpha1.Key]("Key", kind, nil)
	orig := newKey()
	if _, err := kit.Finish(orig, orig.DeepCopy(), time.Second); err != nil {
		t.Fatal(err)
	}
	if kind.writes != 0 || kind.stamped != 1 || len(kind.requeued) != 1 {
		t.Fatalf("writes %d, stamps %d, re-queues %v; want 0, 1, one", kind.writes, kind.stamped, kind.requeued)
	}
}

// A refusal names what to fix, on the object and on those also told; a
// transient failure keeps DigitalOcean's message and is retried sooner.
func TestFailuresSayWhereToFixThem(t *testing.T) {
	rec := record.NewFakeRecorder(10)
	vm := &hfv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm-1"}}
	kind := &keys{vm: vm}
	kit := New[*v1alpha1.Key]("Key", kind, rec)

	k := newKey()
	unauthorized := &godo.ErrorResponse{Response: &http.Response{StatusCode: http.StatusUnauthorized}, Message: "Unable to authenticate you"}
	refusedAfter := kit.FailDO(k, v1alpha1.Created, unauthorized)
	if _, err := kit.Finish(newKey(), k, 0); err != nil {
		t.Fatal(err)
	}
	e := testutil.TakeEvents(rec)
	if len(e) != 2 {
		t.Fatalf("Events %q, want one on the Key and one on its VM", e)
	}
	for _, want := range []string{`Secret "do-token"`, `Environment "env"`, "Unable to authenticate you"} {
		if !strings.Contains(e[0], want) {
			t.Errorf("refusal Event %q does not name %s", e[0], want)
		}
	}

	k = newKey()
	k.UID = "uid-2"
	unavailable := &godo.ErrorResponse{Response: &http.Response{StatusCode: http.StatusBadGateway}, Message: "bad gateway"}
	transientAfter := kit.FailDO(k, v1alpha1.Created, unavailable)
	if msg := v1alpha1.Created.GetMessage(k); msg != "bad gateway" {
		t.Errorf("transient failure recorded %q, want DigitalOcean's message", msg)
	}
	if transientAfter <= 0 || transientAfter >= refusedAfter {
		t.Errorf("transient retry after %v, refusal after %v; want the transient one sooner", transientAfter, refusedAfter)
	}
}

// Forget drops the held Events and the backoff, and tells the kind.
func TestForgetDropsWhatIsRemembered(t *testing.T) {
	rec := record.NewFakeRecorder(10)
	kind := &keys{}
	kit := New[*v1alpha1.Key]("Key", kind, rec)
	k := newKey()
	unavailable := &godo.ErrorResponse{Response: &http.Response{StatusCode: http.StatusBadGateway}, Message: "bad gateway"}
	first := kit.FailDO(k, v1alpha1.Created, unavailable)
	for range 4 {
		kit.FailDO(k, v1alpha1.Created, unavailable)
	}
	kit.Forget(k)
	if kit.Held.Holds(k) || kind.forgotten != 1 {
		t.Fatalf("after Forget: Events held %v, kind told %d times", kit.Held.Holds(k), kind.forgotten)
	}
	if again := kit.Retry(k, digitalocean.Classify(unavailable)); again > 2*first {
		t.Errorf("first retry after Forget in %v, want about the first one's %v", again, first)
	}
}
