package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
)

const controllerPackage = "github.com/hobbyfarm/hf-provisioner-digitalocean"

// BuildController builds the controller binary into dir, once per run, so
// every scenario measures the same program in its own process.
func BuildController(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "hf-provisioner-digitalocean")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, controllerPackage)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", controllerPackage, err, out)
	}
	return bin, nil
}

// optionalFlags are flags a controller build may not have yet; each is probed
// so an older binary still runs, with a warning that the mode is not what it
// claims.
var optionalFlags = []string{
	"--leader-elect=false", "--resync-mode=per-droplet", "--rate-limiter=false", "--rate-limits=250/1m,5000/1h",
	"--rate-limit-headroom=0.1", "--ssh-port=22", "--tag-tidy-delay=1m", "--key-delete-delay=1m",
}

// ProbeFlags returns the optional flags bin rejects, by name ("--resync-mode").
// --version exits after parsing, so a rejected flag shows as exit status 2.
func ProbeFlags(ctx context.Context, bin string) (map[string]bool, error) {
	if out, err := exec.CommandContext(ctx, bin, "--namespace=probe", "--version").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s --version: %v: %s", bin, err, out)
	}
	missing := map[string]bool{}
	for _, f := range optionalFlags {
		if exec.CommandContext(ctx, bin, "--namespace=probe", f, "--version").Run() != nil {
			missing[flagName(f)] = true
		}
	}
	return missing, nil
}

func flagName(f string) string {
	name, _, _ := strings.Cut(f, "=")
	return name
}

// controllerArgs are the flags of one controller process: every period and
// limit divided by the scale, the mode's resync and limiter, and nothing
// missing from the binary. Leader election is off, whatever
// HF_DO_LEADER_ELECT says, so the hold's controller never waits for a lease
// the flood's left behind.
func (c *Config) controllerArgs(scale timeScale, mode Mode, namespace, kubeconfig, doURL string, metricsPort int, missing map[string]bool) []string {
	args := []string{
		"--leader-elect=false",
		"--kubeconfig=" + kubeconfig,
		"--namespace=" + namespace,
		"--do-api-url=" + doURL,
		"--install-crds=false", // testenv installed them
		fmt.Sprintf("--metrics-addr=127.0.0.1:%d", metricsPort),
		"--log-level=info",
		"--boot-resync=" + compactDuration(scale.toReal(bootResync)),
		"--sweep-interval=" + compactDuration(scale.toReal(sweepInterval)),
		"--orphan-grace=" + compactDuration(orphanGrace),
		"--key-delete-delay=" + compactDuration(scale.toReal(keyDeleteDelay)),
	}
	if c.Workers > 0 {
		args = append(args, fmt.Sprintf("--workers=%d", c.Workers))
	}
	switch mode {
	case ModeBaseline:
		args = append(args,
			"--active-resync="+compactDuration(scale.toReal(baselineActiveResync)),
			"--resync-mode=per-droplet",
			"--rate-limiter=false",
			// It stands for controllers that leave their tags behind.
			"--tag-tidy-delay="+compactDuration(baselineTagTidyDelay))
	default:
		args = append(args,
			"--active-resync="+compactDuration(scale.toReal(ourActiveResync)),
			"--resync-mode=batched",
			"--tag-tidy-delay="+compactDuration(scale.toReal(tagTidyDelay)),
			fmt.Sprintf("--rate-limits=%d/%s,%d/%s", PerMinute, compactDuration(scale.toReal(time.Minute)),
				PerHour, compactDuration(scale.toReal(time.Hour))))
	}
	if c.Unlimited && mode != ModeBaseline {
		args = append(args, "--rate-limiter=false")
	}
	kept := args[:0]
	for _, a := range args {
		if !missing[flagName(a)] {
			kept = append(kept, a)
		}
	}
	return kept
}

// compactDuration is d to the millisecond, without zero tails: 6m rather than 6m0s.
func compactDuration(d time.Duration) string {
	s := d.Round(time.Millisecond).String()
	if t, ok := strings.CutSuffix(s, "m0s"); ok {
		s = t + "m"
	}
	if t, ok := strings.CutSuffix(s, "h0m"); ok {
		s = t + "h"
	}
	return s
}

// controller is the controller binary serving one scenario's namespace.
type controller struct {
	proc    *testenv.Process
	baseURL string // its metrics server
}

func startController(ctx context.Context, bin string, args []string, metricsPort int, logPath string) (*controller, error) {
	proc, err := testenv.StartProcess("controller", bin, args, logPath)
	if err != nil {
		return nil, err
	}
	c := &controller{proc: proc, baseURL: fmt.Sprintf("http://127.0.0.1:%d", metricsPort)}
	readyCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	err = proc.WaitReady(readyCtx, func(ctx context.Context) error {
		_, err := fetch(ctx, client, c.baseURL+"/readyz")
		return err
	})
	if err != nil {
		proc.Stop()
		return nil, err
	}
	return c, nil
}

// fetch GETs url and returns the body of a 200 answer.
func fetch(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return body, nil
}

// exited reports an error if the controller is gone.
func (c *controller) exited() error {
	select {
	case <-c.proc.Exited():
		return fmt.Errorf("controller exited:\n%s", c.proc.LogTail(30))
	default:
		return nil
	}
}

// scrapeMetrics saves /metrics to path and returns the sum of
// hf_do_requests_held_back_total, NaN if the controller has no such series.
func (c *controller) scrapeMetrics(ctx context.Context, path string) (float64, error) {
	body, err := c.metrics(ctx)
	if err != nil {
		return nan, err
	}
	if err := os.WriteFile(path, body, 0o644); err != nil {
		return nan, err
	}
	return sumSeries(string(body), "hf_do_requests_held_back_total"), nil
}

// metrics is the controller's /metrics, in Prometheus text format.
func (c *controller) metrics(ctx context.Context) ([]byte, error) {
	return fetch(ctx, &http.Client{Timeout: 10 * time.Second}, c.baseURL+"/metrics")
}

// sumSeries adds up every sample of a metric in Prometheus text format.
func sumSeries(text, name string) float64 {
	total, found := 0.0, false
	eachSample(text, name, func(_ string, v float64) { total, found = total+v, true })
	if !found {
		return nan
	}
	return total
}

// seriesByLabel adds up a metric's samples by the value of one label
// (empty when a sample lacks it); a metric without samples gives an empty map.
func seriesByLabel(text, name, label string) map[string]float64 {
	out := map[string]float64{}
	eachSample(text, name, func(labels string, v float64) {
		value := ""
		if _, rest, ok := strings.Cut(labels, label+"=\""); ok {
			value, _, _ = strings.Cut(rest, "\"")
		}
		out[value] += v
	})
	return out
}

// eachSample calls f with the label set ("{...}" or "") and the value of
// every sample of the metric name in Prometheus text format.
func eachSample(text, name string, f func(labels string, v float64)) {
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		labels := ""
		if rest != "" && rest[0] == '{' {
			labels, _, _ = strings.Cut(rest, "}")
		}
		fields := strings.Fields(line)
		if v, err := strconv.ParseFloat(fields[len(fields)-1], 64); err == nil {
			f(labels, v)
		}
	}
}

// procStats are a process's peak resident memory and CPU time so far.
type procStats struct {
	PeakRSSMiB float64
	CPUSeconds float64
}

// clockTicks is USER_HZ, 100 on every Linux architecture Go supports.
const clockTicks = 100

// readProcStats reads VmHWM from /proc/<pid>/status and utime+stime from
// /proc/<pid>/stat.
func readProcStats(pid int) (procStats, error) {
	var st procStats
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return st, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				return st, fmt.Errorf("VmHWM %q: %w", rest, err)
			}
			st.PeakRSSMiB = kb / 1024
		}
	}
	st.CPUSeconds, err = cpuSeconds(pid)
	return st, err
}

func cpuSeconds(pid int) (float64, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(stat))
}

// parseStatCPU takes utime and stime (fields 14 and 15) from a /proc/<pid>/stat
// line. The command name in parentheses may hold spaces, so fields are
// counted after its closing parenthesis.
func parseStatCPU(stat string) (float64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed stat %q", stat)
	}
	fields := strings.Fields(stat[i+1:]) // fields[0] is field 3, the state
	if len(fields) < 13 {
		return 0, fmt.Errorf("malformed stat %q", stat)
	}
	utime, err1 := strconv.ParseFloat(fields[11], 64)
	stime, err2 := strconv.ParseFloat(fields[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("malformed stat %q", stat)
	}
	return (utime + stime) / clockTicks, nil
}
