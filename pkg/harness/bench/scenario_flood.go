package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	"github.com/rancher/wrangler/v3/pkg/condition"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// runProbes creates the probe VMs and waits until they run; an Environment
// whose ssh_key_scope the controller rejects falls back to vm.
func (s *scenario) runProbes(ctx context.Context, probes []string) error {
	began := time.Now()
	if err := s.createVMs(ctx, probes, nil); err != nil {
		return err
	}
	var lastCheck time.Time
	err := s.waitFor(ctx, probes, isRunning, s.bounds(len(probes)), func() error {
		if s.res.KeyScope != KeyScopeEnvironment || time.Since(lastCheck) < time.Second {
			return nil
		}
		lastCheck = time.Now()
		if msg := s.keyScopeRejected(); msg != "" {
			s.note("the controller rejects %s: %s (%q); falling back to vm", keyScopeConfigKey, KeyScopeEnvironment, msg)
			return s.dropKeyScope()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("probe VMs: %w", err)
	}
	s.logf("%d probe VMs running after %.1f s real", len(probes), time.Since(began).Seconds())
	if keys := len(s.do.Keys(s.token)); s.res.KeyScope == KeyScopeEnvironment && keys >= len(probes) {
		s.note("%s: %s is not in effect: %d SSH keys at DO for %d VMs", keyScopeConfigKey, KeyScopeEnvironment, keys, len(probes))
		s.res.KeyScope = KeyScopeVM + " (environment ignored)"
	}
	return nil
}

// keyScopeRejected returns a Droplet's Configured=False message naming
// ssh_key_scope, if there is one.
func (s *scenario) keyScopeRejected() string {
	list, err := s.droplets.List(s.ns, metav1.ListOptions{})
	if err != nil {
		return ""
	}
	for i := range list.Items {
		d := &list.Items[i]
		if condition.Cond(v1alpha1.Configured).IsFalse(d) {
			if msg := condition.Cond(v1alpha1.Configured).GetMessage(d); strings.Contains(msg, keyScopeConfigKey) {
				return msg
			}
		}
	}
	return ""
}

func (s *scenario) dropKeyScope() error {
	env, err := s.hf.Envs.Get(s.ns, envName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	delete(env.Spec.EnvironmentSpecifics, keyScopeConfigKey)
	if s.hfEnv, err = s.hf.Envs.Update(env); err != nil {
		return err
	}
	s.res.KeyScope = KeyScopeVM + " (environment rejected)"
	return nil
}

// createVMs creates VMs as Gargantua does, CreateConcurrency at a time; atHalf is
// called once half of them exist.
func (s *scenario) createVMs(ctx context.Context, vms []string, atHalf func()) error {
	return s.createVMsIn(ctx, s.hfEnv, vms, atHalf)
}

// createVMsIn is createVMs in the Environment env.
func (s *scenario) createVMsIn(ctx context.Context, env *hfv1.Environment, vms []string, atHalf func()) error {
	for _, name := range vms {
		s.track.add(name)
	}
	var made atomic.Int64
	return s.each(ctx, vms, s.cfg.CreateConcurrency, func(name string) error {
		var err error
		for attempt := 0; attempt < 5; attempt++ {
			if _, err = s.hf.CreateVM(s.ns, name, env, template, "digitalocean"); err == nil {
				break
			}
			time.Sleep(200 * time.Millisecond) // an overloaded apiserver; Gargantua would retry too
		}
		if err != nil {
			return err
		}
		now := time.Now()
		s.track.set(name, func(v *vmTimes) { v.ready = now })
		if atHalf != nil && made.Add(1) == int64((len(vms)+1)/2) {
			atHalf()
		}
		return nil
	})
}

// each runs f on every name, inFlight at a time, and returns the first error.
func (s *scenario) each(ctx context.Context, vms []string, inFlight int, f func(name string) error) error {
	work := make(chan string)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range min(inFlight, len(vms)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range work {
				if err := f(name); err != nil {
					mu.Lock()
					first = cmpErr(first, err)
					mu.Unlock()
				}
			}
		}()
	}
	for _, name := range vms {
		select {
		case work <- name:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	return cmpErr(first, ctx.Err())
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func isRunning(v *vmTimes) bool { return !v.running.IsZero() }
func isGone(v *vmTimes) bool    { return !v.gone.IsZero() }

// errGaveUp means the controller did not finish in the bounds.
var errGaveUp = errors.New("gave up")

// waitBounds are when waiting gives up: limit after since, or when no VM
// progressed for stall.
type waitBounds struct {
	since        time.Time
	limit, stall time.Duration
}

// bounds are for n VMs from now, at the current scale: the floor plus
// runSlack (simulated) plus realSlack and perVMRealSlack each; no progress
// for runSlack, at least stallSlack.
func (s *scenario) bounds(n int) waitBounds {
	sc := s.tl.current()
	return waitBounds{since: time.Now(),
		limit: sc.toReal(Floor(n)+runSlack) + realSlack + time.Duration(n)*perVMRealSlack,
		stall: max(stallSlack, sc.toReal(runSlack))}
}

// floodBounds are for the flood's n VMs: floodFloors floors (simulated, at
// the flood scale) plus realSlack from the flood's first create; the stall
// rule as in bounds. With a key per VM the floor is that of 2n creates: each
// VM's key is created beside its droplet, in the same budget.
func (s *scenario) floodBounds(n int) waitBounds {
	b := s.bounds(n)
	creates := n
	if strings.HasPrefix(s.res.KeyScope, KeyScopeVM) {
		creates = 2 * n
	}
	b.since, b.limit = s.floodBegan, s.tl.flood.toReal(floodFloors*Floor(creates))+realSlack
	return b
}

// waitFor polls until done holds for every VM. It fails when the controller
// exits, ctx ends or check fails, and gives up at the bounds.
func (s *scenario) waitFor(ctx context.Context, vms []string, done func(v *vmTimes) bool, b waitBounds, check func() error) error {
	bound, stall := b.limit, b.stall
	began := b.since
	last, lastChange := -1, time.Now()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		n := s.track.count(vms, done)
		if n == len(vms) {
			return nil
		}
		if now := time.Now(); n != last {
			last, lastChange = n, now
		} else if now.Sub(lastChange) > stall {
			return fmt.Errorf("%w: stuck at %d of %d for %v", errGaveUp, n, len(vms), stall.Round(time.Second))
		}
		if time.Since(began) > bound {
			return fmt.Errorf("%w: %d of %d after %v", errGaveUp, n, len(vms), bound.Round(time.Second))
		}
		if err := s.ctrl.exited(); err != nil {
			return err
		}
		if check != nil {
			if err := check(); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// sleep waits d unless the controller exits or ctx ends.
func (s *scenario) sleep(ctx context.Context, d time.Duration) error {
	end := time.NewTimer(d)
	defer end.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		if err := s.ctrl.exited(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-end.C:
			return nil
		case <-tick.C:
		}
	}
}

// deleteAndWait deletes the VMs and returns the delete-to-gone times of those
// whose droplets went, and how many did not in the bounds.
func (s *scenario) deleteAndWait(ctx context.Context, vms []string) (Dist, int) {
	err := s.each(ctx, vms, s.cfg.DeleteConcurrency, func(name string) error {
		if err := s.hf.VMs.Delete(s.ns, name, nil); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		// The VM is deleted once the apiserver says so (or its watch does,
		// whichever comes first: vmTimes.deletedAt).
		now := time.Now()
		s.track.set(name, func(v *vmTimes) { v.deleted = now })
		return nil
	})
	if err != nil {
		s.note("deleting VMs: %v", err)
	}
	if err := s.waitFor(ctx, vms, isGone, s.bounds(len(vms)), nil); err != nil {
		s.note("waiting for the droplets of %d deleted VMs to go: %v", len(vms), err)
	}
	var secs []float64
	for _, v := range s.track.snapshot(vms) {
		if !v.gone.IsZero() {
			secs = append(secs, s.tl.sim(v.deletedAt(), v.gone))
		}
	}
	return Summarize(secs), len(vms) - len(secs)
}

// runFlood creates the N VMs on the scenario's path, deletes the other half
// of the probes once half of them exist, and waits until all run.
func (s *scenario) runFlood(ctx context.Context, floodDeletes []string) error {
	began := time.Now()
	s.floodBegan = began
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	half, deleted := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(deleted)
		select {
		case <-half:
		case <-ctx.Done():
			return
		}
		s.res.DeleteFlood, s.res.DeleteFloodMissing = s.deleteAndWait(ctx, floodDeletes)
	}()
	var err error
	if s.garg != nil {
		s.flood, err = s.createVMSet(func() { close(half) })
	} else {
		s.flood = names("vm", s.n)
		err = s.createVMs(ctx, s.flood, func() { close(half) })
	}
	flood := s.flood
	s.logf("flood: %d VMs created (%s path) in %.1f s real", len(flood), s.variant.path, time.Since(began).Seconds())
	if err != nil {
		cancel()
		<-deleted
		return fmt.Errorf("creating VMs: %w", err)
	}

	err = s.waitFor(ctx, flood, isRunning, s.floodBounds(len(flood)), nil)
	if err != nil && !errors.Is(err, errGaveUp) {
		cancel()
		<-deleted
		return err
	}
	<-deleted
	s.logf("flood deletes: p95 %.2f s", s.res.DeleteFlood.P95)
	s.floodStats(flood)
	if s.res.Running < len(flood) {
		s.note("flood: %v; VMs that ran later, during the hold, are counted (the hold is then no steady state)", err)
	}
	s.res.Keys = len(s.do.Keys(s.token))
	s.res.Reachable = s.reachableReasons()
	s.res.Region = s.cfg.region()
	if strings.Contains(s.res.Region, ",") {
		s.res.ByRegion = map[string]int{}
		for _, d := range s.do.Droplets(s.token) {
			s.res.ByRegion[d.Region.Slug]++
		}
		s.res.RefusedCreates = s.do.RouteRequests(fakedo.RouteCreateDroplets, "422")
	}
	s.logf("flood: %d of %d running after %.2f sim min (floor %.2f), p95 overhead %.2f s",
		s.res.Running, len(flood), float64(s.res.Wall)/60, s.res.Floor/60, s.res.Overhead.P95)
	return nil
}

// floodStats computes the flood's figures from the VMs that run by now; the
// informer keeps stamping, so calling it again later counts late VMs too.
func (s *scenario) floodStats(flood []string) {
	st := s.startStats(flood)
	s.res.Running = st.running
	s.res.Overhead, s.res.BeforeCreate, s.res.AfterActive = st.overhead, st.beforeCreate, st.afterActive
	s.res.Wall = Num(nan)
	if s.res.Running == len(flood) {
		s.res.Wall = Num(s.tl.sim(s.floodBegan, st.lastRunning))
	}
}

// startStats are how VMs started: how many run, their time-to-running
// overhead and its parts (simulated), and when the last one ran.
type startStats struct {
	running                             int
	overhead, beforeCreate, afterActive Dist
	lastRunning                         time.Time
}

func (s *scenario) startStats(vms []string) startStats {
	var st startStats
	var overhead, before, after []float64
	for _, v := range s.track.snapshot(vms) {
		if v.running.IsZero() {
			continue
		}
		st.running++
		if v.running.After(st.lastRunning) {
			st.lastRunning = v.running
		}
		overhead = append(overhead, s.tl.sim(v.ready, v.running)-BootDelay.Seconds())
		if !v.created.IsZero() {
			before = append(before, s.tl.sim(v.ready, v.created))
			after = append(after, s.tl.sim(v.active, v.running))
		}
	}
	st.overhead, st.beforeCreate, st.afterActive = Summarize(overhead), Summarize(before), Summarize(after)
	return st
}

// floodSet names the VirtualMachineSet of the vmset path.
const floodSet = "flood"

// createVMSet makes the flood as one VirtualMachineSet of N, as a scheduled
// event does: Gargantua's VM set controller creates its VMs one after the
// other, each with its status write. The hooks register every VM as its
// create returns and start its clock as its status write does; atHalf is
// called once half of them have their status. It returns the VMs made; a VM
// whose status write failed is noted and kept (it will not run).
func (s *scenario) createVMSet(atHalf func()) ([]string, error) {
	var written atomic.Int64
	half := int64((s.n + 1) / 2)
	s.vmHooks.created = func(vm *hfv1.VirtualMachine, _ time.Time) { s.track.add(vm.Name) }
	s.vmHooks.statusWritten = func(vm *hfv1.VirtualMachine, at time.Time) {
		first := false
		s.track.set(vm.Name, func(v *vmTimes) {
			if v.ready.IsZero() {
				v.ready, first = at, true
			}
		})
		if first && written.Add(1) == half {
			atHalf()
		}
	}
	vms, err := s.garg.CreateVMSet(floodSet, envName, template, s.n, "bench")
	out := make([]string, 0, len(vms))
	for _, vm := range vms {
		out = append(out, vm.Name)
	}
	if err != nil && len(vms) > 0 {
		s.note("VM set: %d of %d VMs made: %v", len(vms), s.n, err)
		err = nil
	}
	if err == nil && int64(len(vms)) < half {
		atHalf() // never reached: let the in-flood deletes go
	}
	return out, err
}

// reachableReasons counts the namespace's Droplets by their Reachable
// condition, as status/reason; a Droplet without it counts as "none".
func (s *scenario) reachableReasons() map[string]int {
	list, err := s.droplets.List(s.ns, metav1.ListOptions{})
	if err != nil {
		s.note("listing Droplets: %v", err)
		return nil
	}
	out := map[string]int{}
	for i := range list.Items {
		out[reachableKey(&list.Items[i])]++
	}
	return out
}

func reachableKey(d *v1alpha1.Droplet) string {
	c := condition.Cond(v1alpha1.Reachable)
	if st := c.GetStatus(d); st != "" {
		return st + "/" + c.GetReason(d)
	}
	return "none"
}
