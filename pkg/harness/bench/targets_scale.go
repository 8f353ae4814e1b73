package bench

import "fmt"

// The fleet's goals at event scale, N = 1,000 (ours): VMs still run within
// seconds of their boot, an event's end clears its droplets at once, and a
// VM's whole life costs little of the token's budget.
const (
	maxOverheadP95At1000  = 5.0  // simulated seconds
	maxDeleteAllP95At1000 = 15.0 // simulated seconds, at the garbage collector's pace
	maxPerVMLifecycle     = 1.5  // DigitalOcean requests per VM, the hold excluded
)

// scaleTargets are the event-scale targets on ours at N = 1,000 (nil: not run).
func scaleTargets(ours *Result) []Target {
	need := fmt.Sprintf("needs ours at N=%d", targetN)
	return []Target{
		check("p95 time-to-running overhead ≤ 5 s at N=1000 (ours)", []*Result{ours}, need, func() (bool, string) {
			if ours.Running < ours.N {
				return false, fmt.Sprintf("only %d of %d VMs ran", ours.Running, ours.N)
			}
			return ours.Overhead.P95 <= maxOverheadP95At1000, fmt.Sprintf("%.2f s", ours.Overhead.P95)
		}),
		check("event end at N=1000 (ours): p95 delete-to-gone of all N ≤ 15 s, zero 429s, no VM gone from Kubernetes before DO took its droplet's delete",
			[]*Result{ours}, need, func() (bool, string) {
				d := ours.DeleteAll
				detail := fmt.Sprintf("p95 %.2f s, %d 429s, %d VMs gone first", d.P95, ours.TooMany, ours.GoneBeforeDelete)
				if ours.DeleteAllMissing > 0 || d.Count == 0 {
					return false, detail + fmt.Sprintf(" (%d droplets never went)", ours.DeleteAllMissing)
				}
				return d.P95 <= maxDeleteAllP95At1000 && ours.TooMany == 0 && ours.GoneBeforeDelete == 0, detail
			}),
		check("DO requests per VM lifecycle ≤ 1.5 at N=1000 (ours, ssh_key_scope environment)",
			[]*Result{withKeyScope(ours, KeyScopeEnvironment)}, need+" with ssh_key_scope environment in effect", func() (bool, string) {
				n := sum(ours.LifecycleRequests)
				return float64(ours.PerVMLifecycle) <= maxPerVMLifecycle,
					fmt.Sprintf("%.2f (%d requests for %d VMs)", float64(ours.PerVMLifecycle), n, ours.LifecycleVMs)
			}),
	}
}

// withKeyScope is r if the ssh_key_scope in effect was scope (or r was
// aborted, which fails the target), else nil.
func withKeyScope(r *Result, scope string) *Result {
	if r == nil || r.Aborted || r.KeyScope == scope {
		return r
	}
	return nil
}
