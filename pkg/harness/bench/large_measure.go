package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
)

// reqCount is a set of the fake's requests: by endpoint, and its 429s.
type reqCount struct {
	byEndpoint map[string]int
	tooMany    int
}

func (c reqCount) total() int { return sum(c.byEndpoint) }

// requestsIn counts the records of one token (its fakedo.TokenHash; empty for
// every token) that arrived in [from, to); a zero to is open.
func requestsIn(records []fakedo.RequestRecord, tokenHash string, from, to time.Time) reqCount {
	c := reqCount{byEndpoint: map[string]int{}}
	for _, r := range records {
		if tokenHash != "" && r.TokenHash != tokenHash || r.Time.Before(from) || !to.IsZero() && !r.Time.Before(to) {
			continue
		}
		c.byEndpoint[r.Pattern]++
		if r.Status == 429 {
			c.tooMany++
		}
	}
	return c
}

// summarize reads what is measured over the whole scenario: the
// controllers' peaks and CPU, the control plane's, kube-apiserver's
// requests, every token's requests, and droplets duplicated or leaked.
func (l *large) summarize(ctx context.Context, kube0 map[string]float64) {
	r := &l.out
	r.Controllers = l.res.Controllers
	r.PeakRSSMiB, r.CPUSeconds, _ = combineRuns(r.Controllers)
	for _, p := range r.Phases {
		r.APIServerCPU += p.APIServerCPU
		r.EtcdCPU += p.EtcdCPU
	}
	if kube1, err := kubeRequests(ctx, l.env.Config()); err != nil {
		l.note("reading kube-apiserver metrics: %v", err)
	} else {
		l.recordKubeRequests(diffCounts(kube0, kube1))
		r.KubeRequests, r.KubeWrites = l.res.KubeRequests, l.res.KubeWrites
	}

	records := l.do.Requests()
	if counted := sum(l.do.RequestCounts()); counted > len(records) {
		l.note("the fake's request log kept %d of %d requests: per-token figures miss the oldest", len(records), counted)
	}
	started := map[int][]string{eventEnv: names("new", l.cfg.NewEvent)}
	for i, token := range l.tokens {
		hash := fakedo.TokenHash(token)
		t := LargeToken{Env: l.envs[i].Name, VMs: len(l.vms[i]), PerVMHour: Num(nan)}
		all := requestsIn(records, hash, time.Time{}, time.Time{})
		t.Requests, t.TooMany = all.total(), all.tooMany
		if r.HoldVMs > 0 {
			t.HoldRequests = requestsIn(records, hash, r.HoldWindow[0], r.HoldWindow[1]).total()
			t.PerVMHour = Num(float64(t.HoldRequests) / float64(t.VMs) / (r.HoldSeconds / 3600))
		}
		t.EventRequests = requestsIn(records, hash, r.EventWindow[0], r.EventWindow[1]).total()
		if vms := started[i]; len(vms) > 0 {
			t.EventStarted = l.startStats(vms).overhead
		}
		if i == busyEnv {
			t.EventDeleted = r.BusyDelete
		}
		r.Tokens = append(r.Tokens, t)
	}
	r.Droplets, r.Duplicates, r.Leaked = l.dropletCounts(append(l.built(), started[eventEnv]...))
}

// dropletCounts are the droplets created for vms, the VMs with more than
// one, and the droplets still live at the fake that belong to no VM that
// should be running (the busy Environment's were all deleted).
func (l *large) dropletCounts(vms []string) (created, duplicates, leaked int) {
	alive := map[string]bool{}
	for _, name := range vms {
		alive[digitalocean.DropletName(name)] = true
	}
	for _, v := range l.track.snapshot(vms) {
		created += len(v.dropletIDs)
		if len(v.dropletIDs) > 1 {
			duplicates++
		}
	}
	for _, name := range l.vms[busyEnv] {
		delete(alive, digitalocean.DropletName(name))
	}
	for _, token := range l.tokens {
		for _, d := range l.do.DropletLives(token) {
			if d.Deleted.IsZero() && !alive[d.Name] {
				leaked++
			}
		}
	}
	return created, duplicates, leaked
}

// cpuShare renders part of the whole as a percentage.
func cpuShare(part, whole float64) string {
	if whole <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*part/whole)
}
