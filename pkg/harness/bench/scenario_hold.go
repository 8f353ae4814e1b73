package bench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// hold lets the fleet sit for the simulated hold and counts its requests.
func (s *scenario) hold(ctx context.Context) error {
	if s.cfg.Hold == 0 {
		return s.waitCaughtUp(ctx)
	}
	before := byEndpoint(s.do.RequestCounts())
	began := time.Now()
	s.logf("holding for %v simulated (%v real)", s.cfg.Hold, s.tl.hold.toReal(s.cfg.Hold).Round(time.Second))
	if err := s.sleep(ctx, s.tl.hold.toReal(s.cfg.Hold)); err != nil {
		return err
	}
	s.res.HoldSeconds = s.tl.sim(began, time.Now())
	s.res.HoldRequests = byEndpoint(s.do.RequestCounts())
	for e, n := range before {
		s.res.HoldRequests[e] -= n
	}
	s.res.PerVMHour = Num(float64(sum(s.res.HoldRequests)) / float64(s.n) / (s.res.HoldSeconds / 3600))
	s.logf("hold: %d requests, %.3f per VM-hour", sum(s.res.HoldRequests), s.res.PerVMHour)
	return nil
}

// byEndpoint folds the fake's counts by endpoint and status into counts by endpoint.
func byEndpoint(counts map[string]int) map[string]int {
	out := map[string]int{}
	for key, n := range counts {
		out[endpointOf(key)] += n
	}
	return out
}

// endpointOf strips the status from a fake.RequestRecord.CountKey.
func endpointOf(countKey string) string {
	i := strings.LastIndexByte(countKey, ' ')
	if i < 0 {
		return countKey
	}
	return countKey[:i]
}

func tooMany(counts map[string]int) int {
	n := 0
	for key, c := range counts {
		if strings.HasSuffix(key, " 429") {
			n += c
		}
	}
	return n
}

// finish reads what is measured over the whole scenario, while the controller still runs.
func (s *scenario) finish(ctx context.Context, cpu0, kube0 map[string]float64) {
	s.collectController(ctx)
	s.res.PeakRSSMiB, s.res.CPUSeconds, s.res.HeldBack = combineRuns(s.res.Controllers)
	counts := s.do.RequestCounts()
	s.res.Requests, s.res.TooMany = byEndpoint(counts), tooMany(counts)
	cpu1 := s.controlPlaneCPU()
	s.res.APIServerCPU = cpu1["kube-apiserver"] - cpu0["kube-apiserver"]
	s.res.EtcdCPU = cpu1["etcd"] - cpu0["etcd"]
	if kube1, err := kubeRequests(ctx, s.env.Config()); err != nil {
		s.note("reading kube-apiserver metrics: %v", err)
	} else {
		s.recordKubeRequests(diffCounts(kube0, kube1))
	}

	made := append(names("probe", s.cfg.Probes), s.flood...)
	s.writeTimelines(s.began, made)
	s.res.LifecycleRequests, s.res.LifecycleVMs = lifecycleRequests(s.res.Requests, s.res.HoldRequests), len(made)
	s.res.PerVMLifecycle = Num(float64(sum(s.res.LifecycleRequests)) / float64(len(made)))
	ids := map[int]bool{}
	for _, v := range s.track.snapshot(made) {
		for id := range v.dropletIDs {
			ids[id] = true
		}
		if len(v.dropletIDs) > 1 {
			s.res.Duplicates++
		}
		if v.goneFromKubeFirst() {
			s.res.GoneBeforeDelete++
		}
	}
	s.res.Droplets = len(ids)
}

// lifecycleRequests are all requests but the hold's, by endpoint, without
// endpoints left at zero.
func lifecycleRequests(all, hold map[string]int) map[string]int {
	out := map[string]int{}
	for e, n := range all {
		if n -= hold[e]; n > 0 {
			out[e] = n
		}
	}
	return out
}

// recordKubeRequests sums the scenario's kube-apiserver requests and keeps
// them by verb and resource in kube-requests.txt, most first.
func (s *scenario) recordKubeRequests(counts map[string]float64) {
	keys := make([]string, 0, len(counts))
	for k, v := range counts {
		keys = append(keys, k)
		s.res.KubeRequests += v
		if isWrite(k) {
			s.res.KubeWrites += v
		}
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(counts[b], counts[a]) })
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%8.0f  %s\n", counts[k], k)
	}
	if err := os.WriteFile(filepath.Join(s.dir, "kube-requests.txt"), []byte(b.String()), 0o644); err != nil {
		s.note("%v", err)
	}
}

func (s *scenario) controlPlaneCPU() map[string]float64 {
	out := map[string]float64{}
	for name, pid := range s.env.Pids() {
		if cpu, err := cpuSeconds(pid); err == nil {
			out[name] = cpu
		}
	}
	return out
}

// caughtUpBound is how long, real, the benchmark waits for the restarted
// controller's first pass over the objects.
const caughtUpBound = 2 * time.Minute

// waitCaughtUp waits, without a hold, until the restarted controller's
// queues are empty: its first pass over every object (a read of each
// droplet it does not know yet) is the harness's restart, which a
// controller that ran through the event would not make at its end.
func (s *scenario) waitCaughtUp(ctx context.Context) error {
	began := time.Now()
	for time.Since(began) < caughtUpBound {
		body, err := s.ctrl.metrics(ctx)
		if err == nil && sumSeries(string(body), "workqueue_depth") == 0 {
			s.logf("no hold: the restarted controller caught up after %.1f s real", time.Since(began).Seconds())
			return nil
		}
		if err := s.sleep(ctx, time.Second/4); err != nil {
			return err
		}
	}
	s.note("the restarted controller's queues were not empty after %v real; the event ends all the same", caughtUpBound)
	return nil
}
