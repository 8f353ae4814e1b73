package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/virtualmachine"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BeforeStart is what a pool did before its event's start.
type BeforeStart struct {
	// FirstPoolAfterCreation is from the event's creation to the first
	// pool droplet's create at DigitalOcean; FirstPoolBeforeStart from that
	// create to the start (NaN without any pool droplet).
	FirstPoolAfterCreation Num `json:"first_pool_after_creation"`
	FirstPoolBeforeStart   Num `json:"first_pool_before_start"`
	// ReadyAtStart and WantedAtStart are the WarmPool's status at the start.
	ReadyAtStart  int `json:"ready_at_start"`
	WantedAtStart int `json:"wanted_at_start"`
	// ControllerSaid are the WarmPool's status messages before the start,
	// each change once (at most maxSaid): when the controller means the
	// pool to fill, and why.
	ControllerSaid []string `json:"controller_said,omitempty"`
}

const maxSaid = 8

// poolSample is the pool counted at one moment: sessions started so far,
// unclaimed pool droplets live at the fake, and the WarmPool's members
// (ready + booting) in the cluster.
type poolSample struct {
	At      time.Time
	Arrived int
	AtFake  int
	InKube  int
}

// SeatFigures is the pool against the seats left (seats − sessions started),
// from samples every poolSampleEvery.
type SeatFigures struct {
	Samples int `json:"samples"`
	// MaxOver is the largest excess of the pool over the seats left seen;
	// LongestOver the longest time an excess lasted (seconds).
	MaxOver     int     `json:"max_over"`
	LongestOver float64 `json:"longest_over_seconds"`
	// FullAfter is from the first sample to the event's seats all taken
	// (NaN if never); PoolAfterFull the most pool droplets seen once it
	// was full for seatGrace.
	FullAfter     Num `json:"full_after"`
	PoolAfterFull int `json:"pool_after_full"`
}

// seatGrace is how long the pool may exceed the seats left: a VM made the
// normal way takes a seat the pool must give back by deleting a member,
// which needs the VM's watch event, a reconcile and a DELETE on a machine
// eleven controllers share. An excess that lasts longer is a pool sized past
// the seats.
const seatGrace = 15 * time.Second

// seatFigures reads the samples against seats.
func seatFigures(samples []poolSample, seats int, grace time.Duration) SeatFigures {
	f := SeatFigures{Samples: len(samples), FullAfter: Num(nan)}
	if len(samples) == 0 {
		return f
	}
	var overSince, fullAt time.Time
	for _, s := range samples {
		pool := max(s.AtFake, s.InKube)
		excess := pool - max(seats-s.Arrived, 0)
		f.MaxOver = max(f.MaxOver, excess)
		// An excess lasts from the first sample that shows it to the first
		// that no longer does: an upper bound, by one sample at most.
		if excess > 0 && overSince.IsZero() {
			overSince = s.At
		}
		if !overSince.IsZero() {
			f.LongestOver = max(f.LongestOver, s.At.Sub(overSince).Seconds())
		}
		if excess <= 0 {
			overSince = time.Time{}
		}
		if s.Arrived >= seats && fullAt.IsZero() {
			fullAt = s.At
			f.FullAfter = Num(s.At.Sub(samples[0].At).Seconds())
		}
		if !fullAt.IsZero() && s.At.Sub(fullAt) >= grace {
			f.PoolAfterFull = max(f.PoolAfterFull, pool)
		}
	}
	f.MaxOver = max(f.MaxOver, 0)
	return f
}

// sampler counts the pool every poolSampleEvery from the event's creation
// to the drain.
type sampler struct {
	r    *poolRun
	mu   sync.Mutex
	list []poolSample
	done chan struct{}
	once sync.Once
}

func newSampler(r *poolRun) *sampler { return &sampler{r: r, done: make(chan struct{})} }

func (s *sampler) run(ctx context.Context) {
	tick := time.NewTicker(poolSampleEvery)
	defer tick.Stop()
	for {
		if sample, ok := s.r.sample(); ok {
			s.mu.Lock()
			s.list = append(s.list, sample)
			s.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-s.done:
			return
		case <-tick.C:
		}
	}
}

func (s *sampler) stop() { s.once.Do(func() { close(s.done) }) }

func (s *sampler) taken() []poolSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.list)
}

// sample counts the pool now; the claimed droplets are read first, so a
// claim between the two reads counts the droplet as a VM's, never twice.
func (r *poolRun) sample() (poolSample, bool) {
	s := poolSample{Arrived: int(r.arrived.Load())}
	claimed, err := r.claimedIDs()
	if err != nil {
		return s, false
	}
	for _, d := range r.do.DropletLives(r.token) {
		if isPoolDroplet(d.Name) && d.Deleted.IsZero() && !claimed[d.ID] {
			s.AtFake++
		}
	}
	if list, err := r.pools.List(r.ns, metav1.ListOptions{}); err == nil {
		for _, p := range list.Items {
			s.InKube += p.Status.Ready + p.Status.Booting
			if p.Status.Message != "" && time.Now().Before(r.res.Start) {
				r.mu.Lock()
				said := r.res.Before.ControllerSaid
				if len(said) < maxSaid && (len(said) == 0 || said[len(said)-1] != p.Status.Message) {
					r.res.Before.ControllerSaid = append(said, p.Status.Message)
				}
				r.mu.Unlock()
			}
		}
	}
	s.At = time.Now()
	return s, true
}

// claimedIDs are the droplet IDs VMs took from the pool.
func (r *poolRun) claimedIDs() (map[int]bool, error) {
	list, err := r.droplets.List(r.ns, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[int]bool{}
	for _, d := range list.Items {
		if d.Spec.ClaimedDropletID != 0 {
			out[d.Spec.ClaimedDropletID] = true
		}
	}
	return out, nil
}

// firstPoolDroplet times the first pool droplet's create from the event's
// creation and before its start (NaN, NaN without one).
func (r *poolRun) firstPoolDroplet() (afterCreation, beforeStart Num) {
	first := r.lives.firstPoolCreate()
	if first.IsZero() {
		return Num(nan), Num(nan)
	}
	return Num(first.Sub(r.res.EventCreated).Seconds()), Num(r.res.Start.Sub(first).Seconds())
}

// waitRunning waits until every VM runs or ended in error.
func (r *poolRun) waitRunning(ctx context.Context, vms []string, bound time.Duration) error {
	return r.poll(ctx, bound, func() string {
		n := r.track.count(vms, isRunning)
		if n == len(vms) || n+len(r.erroredVMs(vms)) == len(vms) {
			return ""
		}
		return fmt.Sprintf("%d of %d running", n, len(vms))
	})
}

func (r *poolRun) erroredVMs(vms []string) []string {
	list, err := r.garg.Clients.VMs.List(r.ns, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var out []string
	for _, vm := range list.Items {
		if slices.Contains(vms, vm.Name) && vm.Status.Status == "errorduringprovisioning" {
			out = append(out, vm.Name)
		}
	}
	return out
}

// poll calls cond every 200 ms until it returns "", the controller exits,
// ctx ends or bound passes (an error with cond's last word).
func (r *poolRun) poll(ctx context.Context, bound time.Duration, cond func() string) error {
	deadline := time.Now().Add(bound)
	tick := time.NewTicker(10 * pollInterval)
	defer tick.Stop()
	for {
		last := cond()
		if last == "" {
			return nil
		}
		if err := r.ctrl.exited(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w after %v: %s", errGaveUp, bound, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// measure computes time-to-running, the VMs that waited a boot and the claims.
func (r *poolRun) measure(vms []string) {
	claimed := map[string]bool{}
	for _, name := range vms {
		if d, err := r.droplets.Get(r.ns, name, metav1.GetOptions{}); err == nil && d.Spec.ClaimedDropletID != 0 {
			claimed[name] = true
		}
	}
	var secs, claimSecs []float64
	for i, v := range r.track.snapshot(vms) {
		if v.running.IsZero() {
			r.res.TTRs = append(r.res.TTRs, Num(nan))
			continue
		}
		d := v.running.Sub(v.ready).Seconds()
		secs = append(secs, d)
		r.res.TTRs = append(r.res.TTRs, Num(d))
		if claimed[vms[i]] {
			claimSecs = append(claimSecs, d)
		}
	}
	r.res.WaitedBoot = waitedBoot(r.res.TTRs, BootDelay)
	r.res.Running, r.res.TTR, r.res.Claims = len(secs), Summarize(secs), len(claimed)
	r.res.ClaimTTR, r.res.ClaimTTRs = Summarize(claimSecs), claimSecs
	r.res.Errors = r.erroredVMs(vms)
	r.logf("%d of %d running, p95 time-to-running %.2f s, %d claims, %d waited a boot",
		r.res.Running, len(vms), orNaN(r.res.TTR, r.res.TTR.P95), r.res.Claims, r.res.WaitedBoot)
}

// waitedBoot counts the VMs that waited for a boot: time-to-running above
// half of it (a claim runs in about a second), or never running.
func waitedBoot(ttrs []Num, boot time.Duration) int {
	n := 0
	for _, t := range ttrs {
		if math.IsNaN(float64(t)) || float64(t) > boot.Seconds()/2 {
			n++
		}
	}
	return n
}

// claimedAt maps each claimed droplet's ID to its VM's session start: the
// end of its life as an unclaimed pool droplet.
func (r *poolRun) claimedAt(vms []string) map[int]time.Time {
	out := map[int]time.Time{}
	times := r.track.snapshot(vms)
	for i, name := range vms {
		d, err := r.droplets.Get(r.ns, name, metav1.GetOptions{})
		if err == nil && d.Spec.ClaimedDropletID != 0 && i < len(times) {
			out[d.Spec.ClaimedDropletID] = times[i].ready
		}
	}
	return out
}

// waitDrained waits until no unclaimed pool droplet is live at DigitalOcean
// and times the last one's delete from the event's end.
func (r *poolRun) waitDrained(ctx context.Context, vms []string) {
	claimed, err := r.claimedIDs()
	if err != nil {
		r.note("listing Droplets: %v", err)
		return
	}
	err = r.poll(ctx, drainBound, func() string {
		left := 0
		for _, d := range r.do.DropletLives(r.token) {
			if isPoolDroplet(d.Name) && d.Deleted.IsZero() && !claimed[d.ID] {
				left++
			}
		}
		if left > 0 {
			return fmt.Sprintf("%d pool droplets left", left)
		}
		return ""
	})
	if err != nil {
		r.note("draining the pool: %v", err)
		return
	}
	r.res.DrainSeconds = Num(max(r.lives.lastPoolDelete(claimed).Sub(r.res.End).Seconds(), 0))
	r.logf("pool drained %.1f s after the event's end", float64(r.res.DrainSeconds))
}

// twoVMDroplets counts droplets that serve two VMs: held on record by two
// VMs' Droplets (a claimed droplet keeps the pool's tags, so only the
// records tell whose it is), or carrying two VMs' tags.
func (r *poolRun) twoVMDroplets() int {
	list, err := r.garg.Clients.VMs.List(r.ns, metav1.ListOptions{})
	if err != nil {
		r.note("listing VMs: %v", err)
		return 0
	}
	ours := map[string]bool{}
	for _, vm := range list.Items {
		ours[digitalocean.VMTag(string(vm.UID))] = true
	}
	holders := map[int]map[string]bool{}
	hold := func(id int, vm string) {
		if id == 0 {
			return
		}
		if holders[id] == nil {
			holders[id] = map[string]bool{}
		}
		holders[id][vm] = true
	}
	if droplets, err := r.droplets.List(r.ns, metav1.ListOptions{}); err == nil {
		for _, d := range droplets.Items {
			if d.Spec.VirtualMachine != "" {
				hold(d.Status.DropletID, d.Spec.VirtualMachine)
				hold(d.Spec.ClaimedDropletID, d.Spec.VirtualMachine)
			}
		}
	} else {
		r.note("listing Droplets: %v", err)
	}
	n := 0
	for _, d := range r.do.Droplets(r.token) {
		tagged := 0
		for _, t := range d.Tags {
			if ours[t] {
				tagged++
			}
		}
		if tagged > 1 || len(holders[d.ID]) > 1 {
			n++
		}
	}
	return n
}

// scrape keeps the controller's metrics and reads the pool's droplet
// seconds and the requests its limiter held back.
func (r *poolRun) scrape(ctx context.Context) {
	path := filepath.Join(r.dir, "metrics.txt")
	if _, err := r.ctrl.scrapeMetrics(ctx, path); err != nil {
		r.note("scraping metrics: %v", err)
		return
	}
	body, err := os.ReadFile(path)
	if err != nil {
		r.note("reading metrics: %v", err)
		return
	}
	text := string(body)
	r.res.MetricSeconds = Num(sumSeries(text, "hf_do_warm_pool_droplet_seconds_total"))
	r.res.HeldBack = seriesByLabel(text, "hf_do_requests_held_back_total", "priority")
}

// deleteVMs deletes the VMs, as Gargantua does once sessions end, and
// counts what DigitalOcean still holds once they are gone: every droplet
// and every key but the Environment's shared one should go with them.
func (r *poolRun) deleteVMs(ctx context.Context) {
	list, err := r.garg.Clients.VMs.List(r.ns, metav1.ListOptions{})
	if err != nil {
		r.note("listing VMs: %v", err)
		return
	}
	for _, vm := range list.Items {
		_ = r.garg.Clients.VMs.Delete(r.ns, vm.Name, nil)
	}
	shared := digitalocean.KeyName(r.ns, virtualmachine.SharedKeyName(envName))
	left := func() (int, int) { return len(r.do.Droplets(r.token)), vmKeys(r.do.Keys(r.token), shared) }
	err = r.poll(ctx, leakBound, func() string {
		list, err := r.garg.Clients.VMs.List(r.ns, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		if d, k := left(); len(list.Items) > 0 || d > 0 || k > 0 {
			return fmt.Sprintf("%d VMs, %d droplets, %d keys left", len(list.Items), d, k)
		}
		return ""
	})
	r.res.DropletsLeft, r.res.KeysLeft = left()
	if err != nil {
		r.note("deleting the VMs: %v", err)
	}
}

// tearDown deletes the namespace and stops the controller and the fake
// without waiting for the namespace to go: everything was measured, and the
// control plane is thrown away after the runs (a pool's objects can hold a
// namespace for minutes once its token Secret is gone first).
func (r *poolRun) tearDown() {
	(&scenario{env: r.env, ns: r.ns, ctrl: r.ctrl, do: r.do}).tearDown(false)
}
