package e2e

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/fakedo"
)

// TestAClaimCostsAtMostTwoRequests: ten VMs take ready pool droplets, two
// then eight. Everything the claims cause in DigitalOcean (reads or deletes
// naming a claimed droplet, tagging, and the deletion of a claimed member's
// key) averages at most two requests per claim; the pool's refills are the
// pool's cost, not the claims'. The endpoint labels of
// hf_do_requests_total after the two claims are those after all ten: no
// label names a droplet, key or VM.
func TestAClaimCostsAtMostTwoRequests(t *testing.T) {
	const size = 10
	addr := freeAddr(t)
	w, env := poolWorld(t, worldOptions{metricsAddr: addr}, size, true)
	w.waitPoolReady(size)
	// The members' keys, any still registered: a claim that deleted one
	// would count.
	memberKeys := map[int]bool{}
	for _, k := range w.do.Keys(testToken) {
		memberKeys[k.ID] = true
	}
	w.do.ResetRequests()

	var names []string
	claimRound := func(n int) {
		for range n {
			name := fmt.Sprintf("claim-%02d", len(names))
			names = append(names, name)
			w.createVM(name, env, "ubuntu")
		}
		w.waitRunning(names...)
		w.waitClaimsSettled(names, size)
	}
	claimRound(2)
	afterTwo := endpointLabels(scrape(t, addr))
	claimRound(size - 2)
	afterTen := endpointLabels(scrape(t, addr))

	// Every VM took a pool droplet (waitClaimsSettled): one of the first
	// members, or a refill.
	taken := map[int]bool{}
	for _, name := range names {
		taken[w.droplet(name).Spec.ClaimedDropletID] = true
	}
	cost := claimRequests(w.do.Requests(), taken, memberKeys)
	t.Logf("%d requests caused by %d claims: %v", len(cost), size, cost)
	if avg := float64(len(cost)) / size; avg > 2 {
		t.Errorf("the claims cost %.1f requests each, want at most 2: %v", avg, cost)
	}
	// Not the same sets: a request kind may first come in either round
	// (a key read, say). Each is a route pattern with no ID, so the set is
	// bounded by the routes, whatever the number of VMs.
	for _, e := range afterTen {
		if !routePattern.MatchString(e) {
			t.Errorf("hf_do_requests_total endpoint %q names an object; after 2 claims: %v, after 10: %v", e, afterTwo, afterTen)
		}
	}
	if len(afterTen) > len(afterTwo)+2 {
		t.Errorf("hf_do_requests_total endpoints grew with the VMs:\nafter 2 claims: %v\nafter 10: %v", afterTwo, afterTen)
	}
}

// routePattern is an endpoint label naming no droplet, key, tag or VM:
// path segments are lower-case words or placeholders.
var routePattern = regexp.MustCompile(`^[A-Z]+ (/(v2|[a-z_]+|\{[a-z]+\}))+$`)

// waitClaimsSettled waits until every VM of names took a pool droplet,
// every claimed member was handed over, and the pool is back to size
// claimable members with no key left registered (the refills' retired).
func (w *world) waitClaimsSettled(names []string, size int) {
	w.t.Helper()
	w.eventually(2*time.Minute, "claims handed over and the pool refilled", func() string {
		for _, name := range names {
			if d := w.droplet(name); d.Spec.ClaimedDropletID == 0 || d.Status.DropletID != d.Spec.ClaimedDropletID {
				return fmt.Sprintf("%s: claimed %d, recorded %d", name, d.Spec.ClaimedDropletID, d.Status.DropletID)
			}
		}
		ready := 0
		for _, m := range w.poolMembers() {
			if m.Status.Claim != nil {
				return "member " + m.Name + " not handed over yet"
			}
			if claimableMember(m) {
				ready++
			}
		}
		if _, keys := w.fakeCounts(); ready != size || keys != 0 {
			return fmt.Sprintf("%d of %d members ready, %d keys registered", ready, size, keys)
		}
		return ""
	})
}

// claimRequests are the requests that name a claimed droplet, tag one, or
// delete a claimed member's key.
func claimRequests(records []fakedo.RequestRecord, droplets, keys map[int]bool) []string {
	var out []string
	for _, r := range records {
		id, named := pathID(r.Path, "/v2/droplets/")
		keyID, keyNamed := pathID(r.Path, "/v2/account/keys/")
		switch {
		case r.Pattern == fakedo.RouteCreateTag || r.Pattern == fakedo.RouteTagResources,
			named && droplets[id],
			keyNamed && keys[keyID] && r.Method == "DELETE":
			out = append(out, r.Method+" "+r.Path)
		}
	}
	return out
}

// pathID is the number right after prefix in path, if any.
func pathID(path, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(path, prefix)
	if !ok {
		return 0, false
	}
	rest, _, _ = strings.Cut(rest, "/")
	id, err := strconv.Atoi(rest)
	return id, err == nil
}

var endpointLabel = regexp.MustCompile(`(?m)^hf_do_requests_total\{[^}]*endpoint="([^"]*)"`)

// endpointLabels are the endpoint label values of hf_do_requests_total, sorted.
func endpointLabels(body string) []string {
	set := map[string]bool{}
	for _, m := range endpointLabel.FindAllStringSubmatch(body, -1) {
		set[m[1]] = true
	}
	return slices.Sorted(maps.Keys(set))
}
