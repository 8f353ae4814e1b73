package chart

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/testenv"
)

// TestImageBuildsAndRunsAsNonRoot needs a Docker engine; machines without one
// skip it and say so. An image build takes minutes: not under -short.
func TestImageBuildsAndRunsAsNonRoot(t *testing.T) {
	testenv.SkipUnlessFull(t)
	if err := exec.Command("docker", "info").Run(); err != nil {
		t.Skip("no Docker engine on this machine: image build skipped (docker info: " + err.Error() + ")")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	tag := "hf-provisioner-digitalocean:test"
	if out, err := exec.Command("docker", "build", "--build-arg", "VERSION=test", "-t", tag, root).CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out)
	}
	user, err := exec.Command("docker", "image", "inspect", "-f", "{{.Config.User}}", tag).Output()
	if err != nil {
		t.Fatal(err)
	}
	if u := strings.TrimSpace(string(user)); u == "" || strings.HasPrefix(u, "0") || u == "root" {
		t.Errorf("image user %q, want non-root", u)
	}
	out, err := exec.Command("docker", "run", "--rm", tag, "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "test") {
		t.Errorf("docker run --version: %v %s", err, out)
	}
}
