package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/digitalocean/godo"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/controllers/virtualmachine"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// EventEnd is what deleting all N after the hold (a finished event's end)
// cost DigitalOcean and left there. Its window runs from the benchmark's
// first delete to the last flood VM gone from Kubernetes: what an operator
// waits for, and what shares the token's budget with the next event. The
// deleted VMs' key deletes and the tag tidy come after the droplets and
// are counted on their own, from the first delete on, wherever they fall.
type EventEnd struct {
	// VMs are the flood VMs deleted; NotGone those still in Kubernetes when
	// waiting for them gave up (the window then ends there).
	VMs     int `json:"vms"`
	NotGone int `json:"not_gone"`
	// Seconds is the window's length, simulated.
	Seconds float64 `json:"seconds"`
	// Requests are every request the fake saw in the window but the key
	// and tag tidy requests (keyRoutes, tagRoutes), by endpoint, whatever
	// their status; TooMany the 429s among them; PerVM their sum over VMs.
	Requests map[string]int `json:"requests"`
	TooMany  int            `json:"too_many"`
	PerVM    Num            `json:"per_vm"`
	// KeysAtStart are the VMs' own SSH keys (all but the Environment's
	// shared one) still in DigitalOcean at the first delete: keys the hold
	// did not retire, each a DELETE in the window.
	KeysAtStart int `json:"keys_at_start"`
	// LastRetired is when the hold's last key delete came, in simulated
	// minutes after the hold's controller started (null: none in the hold).
	LastRetired Num `json:"last_retired_min"`
	// KeysAtEnd and DropletsLeft are what DigitalOcean still held at the
	// window's end: VMs' own SSH keys (deleted after the droplets, once
	// their deletes paused), and live droplets of any VM. KeysLeft are the
	// keys still there once the key deletes were waited for (waitKeys),
	// KeysSeconds (simulated, from the window's end) how long that took
	// (null: it did not finish), KeyRequests the key requests meanwhile.
	KeysAtEnd   int `json:"keys_at_end"`
	KeysLeft    int `json:"keys_left"`
	KeysSeconds Num `json:"keys_seconds"`
	KeyRequests int `json:"key_requests"`
	// KeyDeletesFirst are the key deletes sent from the first delete up to
	// the last droplet delete: keys must wait for the droplets (must be 0).
	KeyDeletesFirst int `json:"key_deletes_first"`
	DropletsLeft    int `json:"droplets_left"`
	// TagsAtEnd are the tags of ours no droplet carried at the window's
	// end; TagsLeft those still there once the tidy was waited for
	// (waitTidy), TidySeconds (simulated, from the window's end) how long
	// that took (null: it did not finish), TidyRequests the tag requests
	// meanwhile.
	TagsAtEnd    int `json:"tags_at_end"`
	TagsLeft     int `json:"tags_left"`
	TidySeconds  Num `json:"tidy_seconds"`
	TidyRequests int `json:"tidy_requests"`
}

// maxEventEndPerVM is the DigitalOcean requests an event's end may cost per
// deleted VM: batched deletes cost two requests per batch (three for the
// first), and the VMs' keys and the tags' tidy go after the droplets.
const maxEventEndPerVM = 0.08

func isVanished(v *vmTimes) bool { return !v.vanished.IsZero() }

// endEvent deletes the flood as a finished event's VMs are deleted (on the
// vmset path its set first) and measures it: delete-to-gone of every VM,
// then, once every VM has left Kubernetes, the requests of the window and
// what DigitalOcean still holds.
func (s *scenario) endEvent(ctx context.Context, flood []string) error {
	e := &s.res.EventEnd
	began := time.Now()
	e.VMs, e.PerVM, e.LastRetired = len(flood), Num(nan), Num(nan)
	e.KeysAtStart = vmKeys(s.do.Keys(s.token), s.sharedKeyName())
	if s.garg != nil {
		// Gargantua deletes the set first, so its VM set controller makes
		// no replacements; the VMs are then deleted as the garbage
		// collector would, 20 at a time.
		if err := s.garg.DeleteVMSet(floodSet); err != nil && !apierrors.IsNotFound(err) {
			s.note("deleting the VM set: %v", err)
		}
	}
	s.res.DeleteAll, s.res.DeleteAllMissing = s.deleteAndWait(ctx, flood)
	if err := ctx.Err(); err != nil {
		return err
	}
	s.logf("all deleted: p95 %.2f s, %d not gone", s.res.DeleteAll.P95, s.res.DeleteAllMissing)
	if err := s.waitFor(ctx, flood, isVanished, s.bounds(len(flood)), nil); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.note("waiting for %d deleted VMs to leave Kubernetes: %v", len(flood), err)
	}
	end := time.Now()
	if last, notGone := lastVanished(s.track.snapshot(flood)); notGone == 0 && len(flood) > 0 {
		end = last
	} else {
		e.NotGone = notGone
	}
	s.ended, s.endBegan = end, began
	e.KeysAtEnd, e.DropletsLeft = vmKeys(s.do.Keys(s.token), s.sharedKeyName()), len(s.do.Droplets(s.token))
	e.KeysLeft = e.KeysAtEnd

	records := s.do.Requests()
	if counted := sum(s.do.RequestCounts()); counted > len(records) && (len(records) == 0 || records[0].Time.After(began)) {
		s.note("the fake's request log lost the start of the event end: its requests are undercounted")
	}
	c := eventEndRequests(records, began, end)
	e.Requests, e.TooMany, e.Seconds = c.byEndpoint, c.tooMany, s.tl.sim(began, end)
	e.KeyDeletesFirst = keyDeletesBeforeDroplets(records, began)
	if e.VMs > 0 {
		e.PerVM = Num(float64(c.total()) / float64(e.VMs))
	}
	if !s.tl.switched.IsZero() {
		e.LastRetired = lastKeyDelete(records, s.tl.switched, began, s.tl.sim)
	}
	s.logf("event end: %d requests for %d VMs (%.3f per VM) in %.1f s; VM keys %d at the first delete, %d at the end; %d droplets left",
		c.total(), e.VMs, float64(e.PerVM), e.Seconds, e.KeysAtStart, e.KeysAtEnd, e.DropletsLeft)
	return nil
}

// sharedKeyName is the DigitalOcean name of the Environment's shared key,
// which stays while the Environment does.
func (s *scenario) sharedKeyName() string {
	return digitalocean.KeyName(s.ns, virtualmachine.SharedKeyName(envName))
}

// vmKeys counts the keys but the shared one.
func vmKeys(keys []godo.Key, shared string) int {
	n := 0
	for _, k := range keys {
		if k.Name != shared {
			n++
		}
	}
	return n
}

// lastVanished is when the last of the VMs left Kubernetes, and how many
// have not.
func lastVanished(vms []vmTimes) (last time.Time, notGone int) {
	for _, v := range vms {
		if v.vanished.IsZero() {
			notGone++
		} else if v.vanished.After(last) {
			last = v.vanished
		}
	}
	return last, notGone
}

// eventEndRequests counts every request from began to end, both included,
// but the key and tag tidy requests.
func eventEndRequests(records []fakedo.RequestRecord, began, end time.Time) reqCount {
	c := requestsIn(records, "", began, end.Add(time.Nanosecond))
	for _, r := range append(slices.Clone(keyRoutes), tagRoutes...) {
		delete(c.byEndpoint, r)
	}
	return c
}

// keyDeletesBeforeDroplets counts the key deletes from began up to the last
// droplet delete after it.
func keyDeletesBeforeDroplets(records []fakedo.RequestRecord, began time.Time) int {
	var last time.Time
	for _, r := range records {
		if (r.Pattern == fakedo.RouteDeleteDroplet || r.Pattern == fakedo.RouteDeleteDropletsByTag) && !r.Time.Before(began) {
			last = r.Time
		}
	}
	return routesIn(records, []string{fakedo.RouteDeleteKey}, began, last.Add(time.Nanosecond))
}

// lastKeyDelete is the simulated minutes from from to the last key delete
// DigitalOcean accepted before to (NaN: none); sim converts a span.
func lastKeyDelete(records []fakedo.RequestRecord, from, to time.Time, sim func(a, b time.Time) float64) Num {
	var last time.Time
	for _, r := range records {
		if r.Pattern == fakedo.RouteDeleteKey && r.Status/100 == 2 && !r.Time.Before(from) && r.Time.Before(to) && r.Time.After(last) {
			last = r.Time
		}
	}
	if last.IsZero() {
		return Num(nan)
	}
	return Num(sim(from, last) / 60)
}

// eventEndTargets check the event's end of ours at N = 1,000 (nil: not
// run): what it costs DigitalOcean per deleted VM, and that nothing is left
// there.
func eventEndTargets(ours *Result) []Target {
	need := fmt.Sprintf("needs ours at N=%d", targetN)
	notGone := func(e *EventEnd) string {
		if e.NotGone > 0 {
			return fmt.Sprintf(" (%d VMs never left Kubernetes)", e.NotGone)
		}
		return ""
	}
	return []Target{
		check(fmt.Sprintf("event end at N=1000 (ours): ≤ %g DO requests per deleted VM, first delete to last VM gone from Kubernetes", maxEventEndPerVM),
			[]*Result{ours}, need, func() (bool, string) {
				e := &ours.EventEnd
				detail := fmt.Sprintf("%s (%d requests for %d VMs in %.1f s, %d 429s, ssh_key_scope %s): %s",
					formatValue("%.3f", float64(e.PerVM)), sum(e.Requests), e.VMs, e.Seconds, e.TooMany, ours.KeyScope, countsShown(e.Requests))
				return e.VMs > 0 && float64(e.PerVM) <= maxEventEndPerVM && e.NotGone == 0, detail + notGone(e)
			}),
		check(fmt.Sprintf("event end at N=1000 (ours): no droplet left at DO once every VM is gone from Kubernetes, no key delete before the last droplet delete, and no VM's SSH key within %v simulated", keyBound),
			[]*Result{ours}, need, func() (bool, string) {
				e := &ours.EventEnd
				detail := fmt.Sprintf("%d droplets left; %d VM keys at the first delete, %d at the end, %d left after %s s and %d key requests, %d key deletes before the last droplet delete",
					e.DropletsLeft, e.KeysAtStart, e.KeysAtEnd, e.KeysLeft, formatValue("%.0f", float64(e.KeysSeconds)), e.KeyRequests, e.KeyDeletesFirst)
				return e.VMs > 0 && e.KeysLeft == 0 && e.DropletsLeft == 0 && e.NotGone == 0 && e.KeyDeletesFirst == 0, detail + notGone(e)
			}),
	}
}

// eventEndRows are the event end's rows of the side-by-side table, with its
// requests by endpoint.
func eventEndRows(endpoints []string) []row {
	rows := []row{
		{label: "VM keys at DO when the deletes began", format: "%.0f", value: func(r *Result) float64 { return float64(r.EventEnd.KeysAtStart) }},
		{label: "  last key delete in the hold (min after the restart)", format: "%.1f", noRatio: true, value: func(r *Result) float64 { return float64(r.EventEnd.LastRetired) }},
		{label: "event end: first delete to last VM gone (s)", format: "%.1f", value: func(r *Result) float64 { return r.EventEnd.Seconds }},
		{label: "  DO requests per deleted VM", format: "%.3f", value: func(r *Result) float64 { return float64(r.EventEnd.PerVM) }},
	}
	for _, e := range endpoints {
		rows = append(rows, row{label: "  " + e, format: "%.0f", value: func(r *Result) float64 { return float64(r.EventEnd.Requests[e]) }})
	}
	return append(rows,
		row{label: "  429 responses", format: "%.0f", value: func(r *Result) float64 { return float64(r.EventEnd.TooMany) }},
		row{label: "VM keys at DO at the event end", format: "%.0f", noRatio: true, value: func(r *Result) float64 { return float64(r.EventEnd.KeysAtEnd) }},
		row{label: "  key deletes before the last droplet delete", format: "%.0f", noRatio: true, value: func(r *Result) float64 { return float64(r.EventEnd.KeyDeletesFirst) }},
		row{label: "  key requests from the first delete", format: "%.0f", noRatio: true, value: func(r *Result) float64 { return float64(r.EventEnd.KeyRequests) }},
		row{label: "  keys gone after the event end (s)", format: "%.0f", noRatio: true, value: func(r *Result) float64 { return float64(r.EventEnd.KeysSeconds) }},
		row{label: "  left after the key deletes", format: "%.0f", noRatio: true, value: func(r *Result) float64 { return float64(r.EventEnd.KeysLeft) }},
		row{label: "droplets left at DO after the event end", format: "%.0f", noRatio: true, value: func(r *Result) float64 { return float64(r.EventEnd.DropletsLeft) }},
		row{label: "empty tags of ours at the event end", format: "%.0f", noRatio: true, value: func(r *Result) float64 { return float64(r.EventEnd.TagsAtEnd) }},
		row{label: "  left after the tidy", format: "%.0f", noRatio: true, value: func(r *Result) float64 { return float64(r.EventEnd.TagsLeft) }},
		row{label: "  tidy after the event end (s)", format: "%.0f", noRatio: true, value: func(r *Result) float64 { return float64(r.EventEnd.TidySeconds) }},
		row{label: "  tidy's DO requests from the first delete", format: "%.0f", noRatio: true, value: func(r *Result) float64 { return float64(r.EventEnd.TidyRequests) }},
	)
}
