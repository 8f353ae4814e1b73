package image

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// ChartPath is the chart's directory within the module.
const ChartPath = "chart/hf-provisioner-digitalocean"

// Defaults are the Options for building the checkout in dir as it is: the
// chart's appVersion, so that the binary, the image and the chart agree; the
// HEAD commit; and SOURCE_DATE_EPOCH when set (reproducible-builds.org's
// convention), else the commit's time, so rebuilding a commit changes nothing.
func Defaults(ctx context.Context, dir string) (Options, error) {
	o := Options{SourceDir: dir, Platforms: DefaultPlatforms}
	var err error
	if o.Version, err = ChartAppVersion(dir); err != nil {
		return o, err
	}
	if o.Revision, err = git(ctx, dir, "rev-parse", "HEAD"); err != nil {
		return o, err
	}
	epoch := os.Getenv("SOURCE_DATE_EPOCH")
	if epoch == "" {
		if epoch, err = git(ctx, dir, "log", "-1", "--format=%ct", "HEAD"); err != nil {
			return o, err
		}
	}
	secs, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return o, fmt.Errorf("SOURCE_DATE_EPOCH or commit time %q: %w", epoch, err)
	}
	o.Created = time.Unix(secs, 0).UTC()
	return o, nil
}

// ChartAppVersion reads appVersion from the chart's Chart.yaml.
func ChartAppVersion(dir string) (string, error) {
	path := filepath.Join(dir, ChartPath, "Chart.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var chart struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(data, &chart); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if chart.AppVersion == "" {
		return "", fmt.Errorf("%s has no appVersion", path)
	}
	return chart.AppVersion, nil
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = strings.TrimSpace(string(ee.Stderr))
		}
		return "", fmt.Errorf("git %s (the revision and time come from git): %v %s", strings.Join(args, " "), err, stderr)
	}
	return strings.TrimSpace(string(out)), nil
}
