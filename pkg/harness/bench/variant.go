package bench

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	hfcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/gargantuasim"
)

// Path is how the simulated Gargantua makes the flood's VMs.
type Path string

const (
	// PathClaim makes each VM as the claim controller does: create, then
	// the status write (gargantuasim.Clients.CreateVM), CreateConcurrency at
	// a time.
	PathClaim Path = "claim"
	// PathVMSet makes the flood as one VirtualMachineSet of N: Gargantua's
	// VM set controller makes its VMs one after the other, before any user
	// exists (gargantuasim.Gargantua.CreateVMSet, with Run running).
	PathVMSet Path = "vmset"
)

// Ready checks, as the Environment's ready_check.
const (
	readyCheckConfigKey = "ready_check"
	ReadyCheckSSH       = "ssh"
	ReadyCheckCloudInit = "cloud-init"
	ReadyCheckNone      = "none"
	// ReadyCheckDefault leaves ready_check unset: the controller's default, ssh.
	ReadyCheckDefault = ""
)

// variant is what a scenario varies beyond mode and N.
type variant struct {
	path       Path
	readyCheck string
}

// variants are the path and ready-check combinations run for every N and
// mode, paths outermost; empty lists mean the claim path and ready_check unset.
func (c *Config) variants() []variant {
	paths, checks := c.Paths, c.ReadyChecks
	if len(paths) == 0 {
		paths = []Path{PathClaim}
	}
	if len(checks) == 0 {
		checks = []string{ReadyCheckDefault}
	}
	var out []variant
	for _, p := range paths {
		for _, rc := range checks {
			out = append(out, variant{path: p, readyCheck: rc})
		}
	}
	return out
}

// suffix names the variant in directories, namespaces and log lines;
// empty for the default (claim path, ready_check unset).
func (v variant) suffix() string {
	var parts []string
	if v.path != "" && v.path != PathClaim {
		parts = append(parts, string(v.path))
	}
	if v.readyCheck != ReadyCheckDefault {
		parts = append(parts, "rc-"+v.readyCheck)
	}
	return strings.Join(parts, "-")
}

func validateVariants(c *Config) error {
	for _, p := range c.Paths {
		if p != PathClaim && p != PathVMSet {
			return fmt.Errorf("unknown path %q (claim or vmset)", p)
		}
	}
	for _, rc := range c.ReadyChecks {
		if rc != ReadyCheckSSH && rc != ReadyCheckCloudInit && rc != ReadyCheckNone && rc != ReadyCheckDefault {
			return fmt.Errorf("unknown ready check %q (ssh, cloud-init or none)", rc)
		}
	}
	if slices.Contains(c.Paths, PathVMSet) && c.GargantuaVersion == gargantuasim.V1_0 {
		// Its VM set controller labels no VM for a provisioner: ours never sees them.
		return fmt.Errorf("the vmset path needs Gargantua v3.0 or later: %s leaves VM set VMs to its own provisioner", c.GargantuaVersion)
	}
	if c.SSHDelay < 0 {
		return fmt.Errorf("the SSH delay must not be negative")
	}
	return nil
}

// checksSSH says whether a result's controller waited for an SSH login.
func (r *Result) checksSSH() bool {
	return r.ReadyCheck == ReadyCheckSSH || r.ReadyCheck == ReadyCheckDefault
}

func (r *Result) path() Path {
	if r.Path == "" {
		return PathClaim
	}
	return r.Path
}

// label is a result's column header.
func (r *Result) label() string {
	parts := []string{"keys: " + r.KeyScope}
	if r.path() != PathClaim {
		parts = append(parts, "path: "+string(r.path()))
	}
	if r.ReadyCheck != ReadyCheckDefault {
		parts = append(parts, "ready_check: "+r.ReadyCheck)
	}
	return fmt.Sprintf("%s (%s)", r.Mode, strings.Join(parts, ", "))
}

// TimeToRunningP95 is the p95 of status write → running, simulated seconds.
func (r *Result) TimeToRunningP95() float64 {
	return orNaN(r.Overhead, r.Overhead.P95+BootDelay.Seconds())
}

// reachabilityPair is one flood with ready_check none and the same with the
// SSH check (ssh or unset), at the same N, mode and path.
type reachabilityPair struct {
	none, ssh *Result
}

// cost is ssh's p95 time-to-running minus none's, simulated seconds.
func (p reachabilityPair) cost() float64 {
	return p.ssh.TimeToRunningP95() - p.none.TimeToRunningP95()
}

// reachabilityPairs pairs every ready_check none result with the first SSH
// checking one of its N, mode and path, in the order of the none results.
func reachabilityPairs(results []Result) []reachabilityPair {
	var out []reachabilityPair
	for i := range results {
		none := &results[i]
		if none.ReadyCheck != ReadyCheckNone {
			continue
		}
		j := slices.IndexFunc(results, func(r Result) bool {
			return r.checksSSH() && r.N == none.N && r.Mode == none.Mode && r.path() == none.path()
		})
		if j >= 0 {
			out = append(out, reachabilityPair{none: none, ssh: &results[j]})
		}
	}
	return out
}

// maxReachabilityCost is what the check may add to p95 time-to-running on
// top of the guest's own SSH start-up (simulated seconds).
const maxReachabilityCost = 1.0

// reachabilityTargets check, for each path compared at N = 100 (ours), that
// the SSH check adds at most 1 s plus the fake's SSH start-up delay to p95
// time-to-running. Only a run with a ready_check none scenario has them.
func reachabilityTargets(results []Result) []Target {
	if !slices.ContainsFunc(results, func(r Result) bool { return r.ReadyCheck == ReadyCheckNone }) {
		return nil
	}
	name := func(p Path) string {
		return fmt.Sprintf("reachability check adds ≤ 1 s (+ SSH start-up) to p95 time-to-running at N=%d (ours, %s path)", overheadN, p)
	}
	var out []Target
	for _, pair := range reachabilityPairs(results) {
		if pair.none.Mode != ModeOurs || pair.none.N != overheadN {
			continue
		}
		none, ssh := pair.none, pair.ssh
		out = append(out, check(name(none.path()), []*Result{none, ssh}, "", func() (bool, string) {
			for _, r := range []*Result{none, ssh} {
				if r.Running < r.N {
					return false, fmt.Sprintf("ready_check %s: only %d of %d VMs ran", r.readyCheckShown(), r.Running, r.N)
				}
			}
			allowed := maxReachabilityCost + ssh.SSHDelay
			cost := pair.cost()
			return cost <= allowed, fmt.Sprintf("p95 ssh %.2f s, none %.2f s: %+.2f s (allowed %.2f s = 1 s + SSH start-up %.2f s)",
				ssh.TimeToRunningP95(), none.TimeToRunningP95(), cost, allowed, ssh.SSHDelay)
		}))
	}
	if len(out) == 0 {
		out = append(out, Target{Name: name(PathClaim), Status: Skip,
			Detail: fmt.Sprintf("needs ours at N=%d with ready_check none and ssh (-reachability)", overheadN)})
	}
	return out
}

func (r *Result) readyCheckShown() string {
	if r.ReadyCheck == ReadyCheckDefault {
		return "unset (ssh)"
	}
	return r.ReadyCheck
}

// writeReachability prints each none/ssh pair side by side: p95 time-to-running
// and its parts.
func writeReachability(w io.Writer, results []Result) {
	pairs := reachabilityPairs(results)
	if len(pairs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nreachability check: ready_check none vs ssh (simulated s)")
	lines := [][]string{{"N", "mode", "path", "SSH start-up", "p95 ttr none", "p95 ttr ssh", "ssh − none",
		"after active p95 none", "after active p95 ssh", "running none/ssh", "Droplets' Reachable (ssh)"}}
	for _, p := range pairs {
		lines = append(lines, []string{
			fmt.Sprintf("%d", p.none.N), string(p.none.Mode), string(p.none.path()), fmt.Sprintf("%.2f", p.ssh.SSHDelay),
			formatValue("%.2f", p.none.TimeToRunningP95()), formatValue("%.2f", p.ssh.TimeToRunningP95()),
			formatValue("%+.2f", p.cost()),
			formatValue("%.2f", orNaN(p.none.AfterActive, p.none.AfterActive.P95)),
			formatValue("%.2f", orNaN(p.ssh.AfterActive, p.ssh.AfterActive.P95)),
			fmt.Sprintf("%d/%d of %d", p.none.Running, p.ssh.Running, p.none.N),
			countsShown(p.ssh.Reachable),
		})
	}
	writeAligned(w, lines)
}

// hookedVMs is the simulated Gargantua's VM client with the benchmark
// listening in: created runs once a VM's create returned, statusWritten once
// its status write did (the moment the VM becomes the controller's, which
// starts its time-to-running as on the claim path).
type hookedVMs struct {
	hfcontrollers.VirtualMachineClient
	created, statusWritten func(vm *hfv1.VirtualMachine, at time.Time)
}

func (c *hookedVMs) Create(vm *hfv1.VirtualMachine) (*hfv1.VirtualMachine, error) {
	out, err := c.VirtualMachineClient.Create(vm)
	if err == nil && c.created != nil {
		c.created(out, time.Now())
	}
	return out, err
}

func (c *hookedVMs) UpdateStatus(vm *hfv1.VirtualMachine) (*hfv1.VirtualMachine, error) {
	out, err := c.VirtualMachineClient.UpdateStatus(vm)
	if err == nil && c.statusWritten != nil {
		c.statusWritten(out, time.Now())
	}
	return out, err
}

// countsShown renders counts as "key×n" sorted by key, "-" when empty.
func countsShown(counts map[string]int) string {
	if len(counts) == 0 {
		return "-"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s×%d", k, counts[k]))
	}
	return strings.Join(parts, ",")
}
