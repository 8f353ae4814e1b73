package virtualmachine

import (
	"fmt"
	"strings"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testutil"
	"github.com/rancher/wrangler/v3/pkg/genericcondition"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// heldInvalid is the Environment check's verdicts: since when, by
// Environment, its generation, template and its generation.
type heldInvalid map[string]time.Time

func verdictKey(env string, envGen int64, template string, templateGen int64) string {
	return fmt.Sprintf("%s/%d/%s/%d", env, envGen, template, templateGen)
}

func (v heldInvalid) InvalidSince(env *hfv1.Environment, vmt *hfv1.VirtualMachineTemplate) (time.Time, bool) {
	t, ok := v[verdictKey(env.Name, env.Generation, vmt.Name, vmt.Generation)]
	return t, ok
}

func TestConfigInvalidBeforeTheVMFailsAtOnce(t *testing.T) {
	const grace = 10 * time.Minute
	created := time.Now().Add(-time.Minute).Truncate(time.Second)
	env := &hfv1.Environment{ObjectMeta: metav1.ObjectMeta{Name: "env", Generation: 3}}
	vmt := &hfv1.VirtualMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: "ubuntu", Generation: 2}}
	const message = `config key "region": "Mars 1" is not a DigitalOcean region slug; set it to e.g. "nyc1"`
	current := verdictKey("env", 3, "ubuntu", 2)
	for _, c := range []struct {
		name     string
		verdicts heldInvalid
		reason   string
		status   hfv1.VmStatus
		// invalidFor is how long the Droplet has been Configured=False.
		invalidFor time.Duration
		// want is a part of the failure, "" for none (the VM waits).
		want string
	}{
		{name: "held invalid before the VM was created", verdicts: heldInvalid{current: created.Add(-time.Minute)},
			want: `Environment "env" was already invalid for template "ubuntu" when the VM was created`},
		{name: "held invalid from within the VM's first second", verdicts: heldInvalid{current: created.Add(300 * time.Millisecond)}},
		{name: "held invalid since an edit after the VM was created", verdicts: heldInvalid{current: created.Add(30 * time.Second)}},
		{name: "another generation of the Environment", verdicts: heldInvalid{verdictKey("env", 2, "ubuntu", 2): created.Add(-time.Minute)}},
		{name: "another generation of the template", verdicts: heldInvalid{verdictKey("env", 3, "ubuntu", 1): created.Add(-time.Minute)}},
		{name: "another template", verdicts: heldInvalid{verdictKey("env", 3, "debian", 2): created.Add(-time.Minute)}},
		{name: "not checked yet (a restart)", verdicts: heldInvalid{}},
		{name: "a cache that could not answer", verdicts: heldInvalid{current: created.Add(-time.Minute)}, reason: "ConfigUnavailable"},
		{name: "failed already stays failed, though the verdicts were forgotten", verdicts: heldInvalid{},
			status: VMStatusErrorDuringProvisioning, want: "still invalid: " + message},
		{name: "the grace passed", verdicts: heldInvalid{}, invalidFor: grace + time.Minute, want: "still invalid after 10m0s: " + message},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := &handler{opts: Options{ConfigErrorGrace: grace}, verdicts: c.verdicts,
				envs:      testutil.NamedCache[*hfv1.Environment]{Objs: map[string]*hfv1.Environment{"env": env}},
				templates: testutil.NamedCache[*hfv1.VirtualMachineTemplate]{Objs: map[string]*hfv1.VirtualMachineTemplate{"ubuntu": vmt}}}
			vm := &hfv1.VirtualMachine{
				ObjectMeta: metav1.ObjectMeta{Name: "vm", CreationTimestamp: metav1.NewTime(created)},
				Spec:       hfv1.VirtualMachineSpec{VirtualMachineTemplateId: "ubuntu"},
				Status:     hfv1.VirtualMachineStatus{EnvironmentId: "env", Status: hfv1.VmStatusRFP},
			}
			if c.status != "" {
				vm.Status.Status = c.status
			}
			reason := ReasonInvalidConfig
			if c.reason != "" {
				reason = c.reason
			}
			d := &v1alpha1.Droplet{}
			d.Status.Conditions = []genericcondition.GenericCondition{{Type: string(v1alpha1.Configured), Status: "False",
				Reason: reason, Message: message, LastTransitionTime: time.Now().Add(-c.invalidFor).UTC().Format(time.RFC3339)}}

			why, recheck := h.provisioningFailure(vm, d)
			switch {
			case c.want == "" && why != "":
				t.Errorf("failed (%q), want it to wait for the grace", why)
			case c.want == "" && (recheck <= grace-time.Minute || recheck > grace+time.Second):
				t.Errorf("recheck in %s, want the grace's end, about %s", recheck, grace)
			case c.want != "" && (!strings.Contains(why, c.want) || !strings.Contains(why, message)):
				t.Errorf("failure %q, want it to hold %q and the condition's message (what is wrong and the fix)", why, c.want)
			case c.want != "" && recheck != 0:
				t.Errorf("failed with a recheck in %s", recheck)
			}
		})
	}
}

// A claimed droplet found gone fails its VM, also when the takeover had
// recorded its ID already (it is found gone at the first re-read); a
// running VM never turns failed.
func TestGoneClaimedDropletFailsItsVM(t *testing.T) {
	h := &handler{}
	const message = `droplet 42, taken from warm pool "p", no longer exists in DigitalOcean and is not replaced: delete the VM to get a new one`
	for _, id := range []int{0, 42} {
		d := &v1alpha1.Droplet{}
		d.Spec.ClaimedDropletID = 42
		d.Status.DropletID = id
		d.Status.Conditions = []genericcondition.GenericCondition{{Type: string(v1alpha1.Created), Status: "False",
			Reason: v1alpha1.ReasonClaimedDropletGone, Message: message}}
		vm := &hfv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vm"}, Status: hfv1.VirtualMachineStatus{Status: hfv1.VmStatusRFP}}
		if why, _ := h.provisioningFailure(vm, d); why != message {
			t.Errorf("recorded ID %d: failure %q, want the condition's message", id, why)
		}
		vm.Status.Status = hfv1.VmStatusRunning
		if why, _ := h.provisioningFailure(vm, d); why != "" {
			t.Errorf("recorded ID %d: a running VM failed: %q", id, why)
		}
	}
}
