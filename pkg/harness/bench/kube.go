package bench

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/client-go/rest"
)

// kubeRequests counts kube-apiserver requests by "VERB resource", from its
// apiserver_request_total, so a scenario can tell how many it caused.
func kubeRequests(ctx context.Context, cfg *rest.Config) (map[string]float64, error) {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	defer client.CloseIdleConnections()
	body, err := fetch(ctx, client, strings.TrimRight(cfg.Host, "/")+"/metrics")
	if err != nil {
		return nil, err
	}
	return parseRequestTotals(bytes.NewReader(body))
}

var (
	verbLabel     = regexp.MustCompile(`[{,]verb="([^"]*)"`)
	resourceLabel = regexp.MustCompile(`[{,]resource="([^"]*)"`)
)

func parseRequestTotals(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		verb, resource := verbLabel.FindStringSubmatch(line), resourceLabel.FindStringSubmatch(line)
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if verb == nil || resource == nil || err != nil {
			continue
		}
		out[verb[1]+" "+resource[1]] += v
	}
	return out, sc.Err()
}

// isWrite tells mutating verbs from reads and watches.
func isWrite(verbResource string) bool {
	verb, _, _ := strings.Cut(verbResource, " ")
	return slices.Contains([]string{"POST", "PUT", "PATCH", "DELETE", "APPLY"}, verb)
}

// diffCounts is after minus before, without the keys that did not change.
func diffCounts(before, after map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}
