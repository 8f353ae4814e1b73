package bench

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// soldOutTargets hold a run whose first listed region sells out of the size
// partway (-region nyc3,sfo3 -sell-out nyc3=400) to the event's own goals:
// every VM runs, none twice, no 429, the p95 overhead of a flood without
// a sell-out. Nil unless ours ran with a sell-out.
func soldOutTargets(ours *Result) []Target {
	if ours == nil || ours.SellOut == nil {
		return nil
	}
	name := fmt.Sprintf("%s sold out after %d at N=%d (ours, region %s): every VM running, none with two droplets, zero 429s, p95 overhead ≤ 5 s; refused creates reported",
		ours.SellOut.Region, ours.SellOut.After, ours.N, ours.Region)
	return []Target{check(name, []*Result{ours}, "", func() (bool, string) {
		detail := fmt.Sprintf("%d of %d running, %d with two droplets, %d 429s, p95 overhead %.2f s; %d creates refused; droplets by region %s",
			ours.Running, ours.N, ours.Duplicates, ours.TooMany, ours.Overhead.P95, ours.RefusedCreates, byRegionShown(ours.ByRegion))
		return ours.Running == ours.N && ours.Duplicates == 0 && ours.TooMany == 0 && ours.Overhead.P95 <= maxOverheadP95At1000, detail
	})}
}

// byRegionShown is "nyc3 400, sfo3 620", regions sorted.
func byRegionShown(m map[string]int) string {
	var parts []string
	for _, r := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", r, m[r]))
	}
	return strings.Join(parts, ", ")
}
