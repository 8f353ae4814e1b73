package image

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// BinaryName is the controller binary's name, and its path in the image is /BinaryName.
const BinaryName = "hf-provisioner-digitalocean"

// GoBuild compiles the controller for p as a static binary. The environment
// is pinned, not inherited, where it changes the output: GOFLAGS, the
// microarchitecture levels and VCS stamping (the revision is in a label).
func GoBuild(ctx context.Context, o Options, p v1.Platform) ([]byte, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "hf-image-build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, BinaryName)
	cmd := exec.CommandContext(ctx, goBin, "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -X main.Version="+o.Version, "-o", out, ".")
	cmd.Dir = o.SourceDir
	cmd.Env = append(EnvironWithout("GOFLAGS=", "GOOS=", "GOARCH=", "GOARM=", "GOAMD64=", "GOARM64=", "CGO_ENABLED="),
		"GOFLAGS=", "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture, "GOAMD64=v1", "GOARM64=v8.0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build for %s/%s: %v\n%s", p.OS, p.Architecture, err, msg)
	}
	return os.ReadFile(out)
}

// EnvironWithout is the process environment without the variables starting
// with any of prefixes, for a child process that must not inherit them.
func EnvironWithout(prefixes ...string) []string {
	var env []string
next:
	for _, kv := range os.Environ() {
		for _, p := range prefixes {
			if strings.HasPrefix(kv, p) {
				continue next
			}
		}
		env = append(env, kv)
	}
	return env
}
