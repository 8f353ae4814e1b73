package chart

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/metrics"
	"github.com/prometheus/client_golang/prometheus"
)

// Names the queries may use beyond what the controller exports: Prometheus'
// own per-target series.
var standardMetrics = map[string]bool{"up": true}

// exportedMetrics returns the series names metrics.Registry serves now, and a
// check for names registered without a sample yet (a vec nobody touched).
func exportedMetrics(t *testing.T) func(name string) bool {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	served, gathered := map[string]bool{}, map[string]bool{}
	for _, f := range families {
		name := f.GetName()
		gathered[name] = true
		switch f.GetType().String() {
		case "HISTOGRAM":
			served[name+"_bucket"], served[name+"_sum"], served[name+"_count"] = true, true, true
		case "SUMMARY":
			served[name], served[name+"_sum"], served[name+"_count"] = true, true, true
		default:
			served[name] = true
		}
	}
	return func(name string) bool {
		if standardMetrics[name] || served[name] {
			return true
		}
		// A gathered histogram's own name is no series; only others may lack samples.
		return !gathered[name] && registered(name)
	}
}

// registered reports whether metrics.Registry has a collector describing
// name: registering a different description under that name then fails.
func registered(name string) bool {
	probe := probeCollector{prometheus.NewDesc(name, "probe of pkg/harness/chart's metric-name test", nil, nil)}
	err := metrics.Registry.Register(probe)
	if err == nil {
		metrics.Registry.Unregister(probe)
		return false
	}
	return strings.Contains(err.Error(), "same fully-qualified name")
}

type probeCollector struct{ desc *prometheus.Desc }

func (p probeCollector) Describe(ch chan<- *prometheus.Desc) { ch <- p.desc }
func (p probeCollector) Collect(chan<- prometheus.Metric)    {}

// unknownMetrics returns the metric names expr selects that the controller
// does not export, or an error when expr cannot be read.
func unknownMetrics(expr string, exported func(string) bool) ([]string, error) {
	names, err := metricNames(expr)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%q selects no metric", expr)
	}
	var unknown []string
	for _, n := range names {
		if !exported(n) {
			unknown = append(unknown, n)
		}
	}
	return unknown, nil
}

// labelValues is Grafana's variable query label_values(<selector>, <label>).
var labelValues = regexp.MustCompile(`^\s*label_values\((.+),\s*[a-zA-Z_]\w*\s*\)\s*$`)

// metricNames returns the metric names a PromQL expression selects (also
// Grafana's label_values query). It is a small lexer, not a parser: it skips
// strings, label matchers, ranges, Grafana variables and grouping label
// lists, and takes every other identifier not followed by "(" and not a
// keyword for a metric name. An unknown function is an error, so a typo in
// one is not taken for a metric either.
func metricNames(expr string) ([]string, error) {
	if m := labelValues.FindStringSubmatch(expr); m != nil {
		expr = m[1]
	}
	found := map[string]bool{}
	s := expr
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			end, err := skipString(s, i)
			if err != nil {
				return nil, err
			}
			i = end
		case c == '{' || c == '[':
			end, err := skipGroup(s, i)
			if err != nil {
				return nil, err
			}
			i = end
		case c == '$':
			i = skipVariable(s, i)
		case c >= '0' && c <= '9' || c == '.':
			for i < len(s) && (isIdent(s[i]) || s[i] == '.') {
				i++ // numbers and durations: 0.99, 5m, 1e3
			}
		case isIdentStart(c):
			start := i
			for i < len(s) && isIdent(s[i]) {
				i++
			}
			word := s[start:i]
			next := nextNonSpace(s, i)
			switch {
			case groupingKeywords[word]:
				if next < len(s) && s[next] == '(' {
					end, err := skipGroup(s, next)
					if err != nil {
						return nil, err
					}
					i = end
				}
			case keywords[word]:
			case functions[word] || aggregations[word]:
			case next < len(s) && s[next] == '(':
				return nil, fmt.Errorf("%q: unknown PromQL function %q", expr, word)
			default:
				found[word] = true
			}
		default:
			i++
		}
	}
	names := make([]string, 0, len(found))
	for n := range found {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdent(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

func nextNonSpace(s string, i int) int {
	for i < len(s) && strings.ContainsRune(" \t\r\n", rune(s[i])) {
		i++
	}
	return i
}

// skipString returns the index after the string literal starting at i.
func skipString(s string, i int) (int, error) {
	quote := s[i]
	for j := i + 1; j < len(s); j++ {
		switch {
		case s[j] == '\\' && quote != '`':
			j++
		case s[j] == quote:
			return j + 1, nil
		}
	}
	return 0, fmt.Errorf("%q: unterminated string", s)
}

// skipGroup returns the index after the bracket group opening at i.
func skipGroup(s string, i int) (int, error) {
	closing := map[byte]byte{'{': '}', '[': ']', '(': ')'}
	var stack []byte
	for j := i; j < len(s); j++ {
		switch c := s[j]; c {
		case '"', '\'', '`':
			end, err := skipString(s, j)
			if err != nil {
				return 0, err
			}
			j = end - 1
		case '{', '[', '(':
			stack = append(stack, closing[c])
		case '}', ']', ')':
			if len(stack) == 0 || stack[len(stack)-1] != c {
				return 0, fmt.Errorf("%q: unbalanced %q", s, c)
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return j + 1, nil
			}
		}
	}
	return 0, fmt.Errorf("%q: unclosed %q", s, s[i])
}

// skipVariable returns the index after a Grafana variable: $name or ${name}.
func skipVariable(s string, i int) int {
	if i+1 < len(s) && s[i+1] == '{' {
		if end := strings.IndexByte(s[i:], '}'); end >= 0 {
			return i + end + 1
		}
	}
	i++
	for i < len(s) && isIdent(s[i]) {
		i++
	}
	return i
}

var groupingKeywords = set("by", "without", "on", "ignoring", "group_left", "group_right")

var keywords = set("bool", "and", "or", "unless", "offset", "atan2", "inf", "nan", "start", "end")

var aggregations = set("sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
	"bottomk", "topk", "quantile", "limitk", "limit_ratio")

var functions = set("abs", "absent", "absent_over_time", "ceil", "changes", "clamp", "clamp_max", "clamp_min",
	"day_of_month", "day_of_week", "day_of_year", "days_in_month", "delta", "deriv", "exp", "floor",
	"histogram_avg", "histogram_count", "histogram_fraction", "histogram_quantile", "histogram_stddev",
	"histogram_stdvar", "histogram_sum", "double_exponential_smoothing", "hour", "idelta", "increase",
	"irate", "label_join", "label_replace", "ln", "log2", "log10", "minute", "month", "predict_linear",
	"rate", "resets", "round", "scalar", "sgn", "sort", "sort_desc", "sort_by_label", "sort_by_label_desc",
	"sqrt", "time", "timestamp", "vector", "year", "avg_over_time", "min_over_time", "max_over_time",
	"sum_over_time", "count_over_time", "quantile_over_time", "stddev_over_time", "stdvar_over_time",
	"last_over_time", "present_over_time", "mad_over_time", "acos", "acosh", "asin", "asinh", "atan",
	"atanh", "cos", "cosh", "sin", "sinh", "tan", "tanh", "deg", "pi", "rad")

func set(words ...string) map[string]bool {
	m := map[string]bool{}
	for _, w := range words {
		m[w] = true
	}
	return m
}

// TestMetricNameCheck shows the check used on the dashboard and the alerts
// finds what they select, and fails on a metric the controller does not export.
func TestMetricNameCheck(t *testing.T) {
	for expr, want := range map[string]string{
		`sum by (status) (hf_do_droplets{namespace=~"$namespace"})`:                                               "hf_do_droplets",
		`histogram_quantile(0.9, sum by (le) (rate(hf_do_provisioning_seconds_bucket{a="}"}[$__rate_interval])))`: "hf_do_provisioning_seconds_bucket",
		`(min by (token_hash) (hf_do_ratelimit_remaining) < 500) and on () (sum(increase(up[10m])) > 0)`:          "hf_do_ratelimit_remaining up",
		`(max(hf_do_controller_ready{namespace="x"}) or vector(0)) < 1`:                                           "hf_do_controller_ready",
		`label_values(hf_do_controller_ready, namespace)`:                                                         "hf_do_controller_ready",
		`sum without (code) (rate(job:hf_do_requests:rate5m[5m] offset 1h)) > bool 0`:                             "job:hf_do_requests:rate5m",
	} {
		got, err := metricNames(expr)
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		if strings.Join(got, " ") != want {
			t.Errorf("metricNames(%s) = %v, want %s", expr, got, want)
		}
	}
	for _, bad := range []string{`rat(hf_do_requests_total[5m])`, `sum(hf_do_droplets{a="b"`, `vector(5000)`} {
		if names, err := metricNames(bad); err == nil && len(names) > 0 {
			t.Errorf("metricNames(%s) = %v, want an error or no metric", bad, names)
		}
	}

	exported := exportedMetrics(t)
	for _, name := range []string{"hf_do_requests_total", "hf_do_provisioning_seconds_bucket", "hf_do_controller_ready",
		"hf_do_oldest_pending_seconds", "hf_do_deletes_pending", "go_goroutines", "up"} {
		if !exported(name) {
			t.Errorf("%s is exported but the check says it is not", name)
		}
	}
	// The check must be able to fail: a misspelt, a removed and a made-up metric.
	unknown, err := unknownMetrics(`sum(rate(hf_do_request_total[5m])) + hf_do_droplets_total + sum(hf_do_droplets) + hf_do_provisioning_seconds`, exported)
	if err != nil {
		t.Fatal(err)
	}
	if want := "hf_do_droplets_total hf_do_provisioning_seconds hf_do_request_total"; strings.Join(unknown, " ") != want {
		t.Errorf("unknown metrics = %v, want %s (a histogram's own name is not a series)", unknown, want)
	}
}
