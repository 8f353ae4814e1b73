package bench

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	hfcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
	"github.com/rancher/wrangler/v3/pkg/condition"
)

func TestVariantsArePathsByReadyChecks(t *testing.T) {
	if got := (&Config{}).variants(); len(got) != 1 || got[0] != (variant{path: PathClaim}) || got[0].suffix() != "" {
		t.Errorf("default variants %+v", got)
	}
	c := &Config{Paths: []Path{PathClaim, PathVMSet}, ReadyChecks: []string{ReadyCheckNone, ReadyCheckSSH}}
	var suffixes []string
	for _, v := range c.variants() {
		suffixes = append(suffixes, v.suffix())
	}
	if got := strings.Join(suffixes, " "); got != "rc-none rc-ssh vmset-rc-none vmset-rc-ssh" {
		t.Errorf("suffixes %q", got)
	}
}

func TestValidateRejectsUnknownPathsAndReadyChecks(t *testing.T) {
	valid := func() Config {
		return Config{Ns: []int{100}, Modes: []Mode{ModeOurs}, Scale: 15, CreateConcurrency: 1, DeleteConcurrency: 1, Probes: 2}
	}
	c := valid()
	c.Paths, c.ReadyChecks = []Path{PathVMSet}, []string{ReadyCheckNone, ReadyCheckDefault, ReadyCheckCloudInit}
	c.GargantuaVersion = gargantuasim.V3_0
	if err := c.validate(); err != nil {
		t.Errorf("valid config: %v", err)
	}
	for _, breakIt := range []func(c *Config){
		func(c *Config) { c.Paths = []Path{"session"} },
		func(c *Config) { c.ReadyChecks = []string{"ping"} },
		func(c *Config) { c.SSHDelay = -time.Second },
		func(c *Config) { c.Paths = []Path{PathClaim, PathVMSet} }, // v1.0 labels no VM set VM

	} {
		c := valid()
		breakIt(&c)
		if c.validate() == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// reachabilityRun is ours at N=100 without and with the SSH check, on both paths.
func reachabilityRun() []Result {
	r := func(p Path, rc string, p95 float64) Result {
		return Result{Mode: ModeOurs, N: 100, Path: p, ReadyCheck: rc, Running: 100, Overhead: Dist{Count: 100, P95: p95},
			DeleteIdle: Dist{Count: 1, P95: 1}, DeleteFlood: Dist{Count: 1, P95: 1}}
	}
	return []Result{r(PathClaim, ReadyCheckNone, 1.0), r(PathClaim, ReadyCheckSSH, 1.8),
		r(PathVMSet, ReadyCheckNone, 1.1), r(PathVMSet, ReadyCheckDefault, 2.2)}
}

func TestReachabilityPairsNoneWithSSHOfTheSamePath(t *testing.T) {
	pairs := reachabilityPairs(reachabilityRun())
	if len(pairs) != 2 {
		t.Fatalf("%d pairs", len(pairs))
	}
	if pairs[0].ssh.path() != PathClaim || pairs[1].ssh.path() != PathVMSet || pairs[1].ssh.ReadyCheck != ReadyCheckDefault {
		t.Errorf("pairs %+v %+v", *pairs[0].ssh, *pairs[1].ssh)
	}
	if c := pairs[0].cost(); c < 0.79 || c > 0.81 {
		t.Errorf("claim cost %g, want 0.8", c)
	}
	if got := pairs[0].ssh.TimeToRunningP95(); got != 31.8 {
		t.Errorf("time-to-running p95 %g, want the overhead plus the boot delay", got)
	}
}

func TestReachabilityTargetsAllowOneSecondPlusSSHStartUp(t *testing.T) {
	rs := reachabilityRun()
	targets := Evaluate(rs)
	tail := targets[len(targets)-2:]
	if got := statuses(tail); got != "PASS FAIL" { // vmset: +1.1 s
		t.Fatalf("statuses %s: %+v", got, tail)
	}
	if !strings.Contains(tail[0].Name, "claim path") || !strings.Contains(tail[1].Detail, "+1.10 s") {
		t.Errorf("targets %+v", tail)
	}
	for i := range rs {
		rs[i].SSHDelay = 0.5
	}
	if got := statuses(Evaluate(rs)[len(targets)-2:]); got != "PASS PASS" {
		t.Errorf("with 0.5 s of SSH start-up: %s", got)
	}
	// The overhead target is checked on the flood with the SSH check.
	if o := Evaluate(rs)[2]; o.Status != Pass || !strings.Contains(o.Detail, "1.80") {
		t.Errorf("overhead target %+v", o)
	}
	rs[1].Running = 99
	if got := Evaluate(rs)[len(targets)-2]; got.Status != Fail || !strings.Contains(got.Detail, "99 of 100") {
		t.Errorf("not all ran: %+v", got)
	}
}

func TestReachabilityTargetOnlyInRunsThatAskForIt(t *testing.T) {
	if n := len(Evaluate(passing())); n != 12 {
		t.Errorf("a run without ready_check none has %d targets", n)
	}
	rs := reachabilityRun()[:1] // none without ssh
	targets := Evaluate(rs)
	if last := targets[len(targets)-1]; last.Status != Skip || !strings.Contains(last.Detail, "-reachability") {
		t.Errorf("last target %+v", last)
	}
}

func TestReachabilityTableAndColumnLabels(t *testing.T) {
	rs := reachabilityRun()
	for i := range rs {
		rs[i].KeyScope = KeyScopeEnvironment
	}
	rs[3].Reachable = map[string]int{"True/LoggedIn": 98, "none": 2}
	var out bytes.Buffer
	WriteTables(&out, &Report{Results: rs})
	text := out.String()
	for _, want := range []string{
		"ours (keys: environment, ready_check: none)",
		"ours (keys: environment, path: vmset)",
		"reachability check: ready_check none vs ssh",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("lacks %q:\n%s", want, text)
		}
	}
	f := strings.Fields(lineWith(t, text, "100  ours  vmset"))
	if f[4] != "31.10" || f[5] != "32.20" || f[6] != "+1.10" || f[len(f)-4] != "100/100" || f[len(f)-1] != "True/LoggedIn×98,none×2" {
		t.Errorf("vmset line %q", f)
	}
}

// vmClient answers Create and UpdateStatus; the embedded interface is nil,
// so any other call panics.
type vmClient struct {
	hfcontrollers.VirtualMachineClient
	fail bool
}

func (c vmClient) Create(vm *hfv1.VirtualMachine) (*hfv1.VirtualMachine, error) {
	if c.fail {
		return nil, errors.New("no")
	}
	return vm, nil
}

func (c vmClient) UpdateStatus(vm *hfv1.VirtualMachine) (*hfv1.VirtualMachine, error) {
	if c.fail {
		return nil, errors.New("no")
	}
	return vm, nil
}

func TestHookedVMsReportOnlyWritesThatSucceeded(t *testing.T) {
	var seen []string
	hook := func(what string) func(*hfv1.VirtualMachine, time.Time) {
		return func(vm *hfv1.VirtualMachine, at time.Time) {
			if at.IsZero() {
				t.Error("no time")
			}
			seen = append(seen, what+" "+vm.Name)
		}
	}
	for _, fail := range []bool{false, true} {
		c := &hookedVMs{VirtualMachineClient: vmClient{fail: fail}, created: hook("created"), statusWritten: hook("status")}
		vm := &hfv1.VirtualMachine{}
		vm.Name = "a"
		_, _ = c.Create(vm)
		_, _ = c.UpdateStatus(vm)
	}
	if got := strings.Join(seen, ", "); got != "created a, status a" {
		t.Errorf("hooks saw %q", got)
	}
}

func TestReachableKeyIsStatusAndReason(t *testing.T) {
	d := &v1alpha1.Droplet{}
	if got := reachableKey(d); got != "none" {
		t.Errorf("no condition: %q", got)
	}
	condition.Cond(v1alpha1.Reachable).True(d)
	condition.Cond(v1alpha1.Reachable).Reason(d, "LoggedIn")
	if got := reachableKey(d); got != "True/LoggedIn" {
		t.Errorf("got %q", got)
	}
}

func TestDeleteTargetSkipsTooFewProbes(t *testing.T) {
	rs := reachabilityRun() // one delete idle, one in the flood
	rs[1].DeleteFlood.P95 = 30
	if d := Evaluate(rs)[5]; d.Status != Skip || !strings.Contains(d.Detail, "at least 10 probes") {
		t.Errorf("delete target %+v", d)
	}
	rs[1].DeleteIdle.Count, rs[1].DeleteFlood.Count = 5, 5
	if d := Evaluate(rs)[5]; d.Status != Fail {
		t.Errorf("delete target with 5 and 5: %+v", d)
	}
}
