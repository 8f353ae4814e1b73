package image_test

import (
	"bytes"
	"io/fs"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image/imagetest"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
)

// TestDockerfileBuildsTheSameImage builds the Dockerfile and compares its
// image with pkg/harness/image's: the same files, modes and owners, the same
// contents but for the binary (Docker's Go may differ), user, entrypoint and
// labels; and the binary runs, as non-root. It needs a Docker engine;
// machines without one skip it and say so. Minutes: not under -short.
func TestDockerfileBuildsTheSameImage(t *testing.T) {
	testenv.SkipUnlessFull(t)
	if err := exec.Command("docker", "info").Run(); err != nil {
		t.Skip("no Docker engine on this machine: Dockerfile build skipped (docker info: " + err.Error() + ")")
	}
	o := quickOptions()
	tag := "hf-provisioner-digitalocean:dockerfile-test"
	build := exec.Command("docker", "build", "--build-arg", "VERSION="+o.Version, "--build-arg", "REVISION="+o.Revision, "-t", tag, moduleRoot(t))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("docker", "image", "rm", tag).Run() })
	saved := filepath.Join(t.TempDir(), "image.tar")
	if out, err := exec.Command("docker", "save", "-o", saved, tag).CombinedOutput(); err != nil {
		t.Fatalf("docker save: %v\n%s", err, out)
	}
	docker, err := tarball.ImageFromPath(saved, nil)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := imagetest.PlatformImage(quickIndex(t), dockerArch(t))
	if err != nil {
		t.Fatal(err)
	}

	dockerFiles, err := imagetest.Files(docker)
	if err != nil {
		t.Fatal(err)
	}
	ourFiles, err := imagetest.Files(ours)
	if err != nil {
		t.Fatal(err)
	}
	delete(dockerFiles, "/")
	if got, want := slices.Sorted(maps.Keys(dockerFiles)), slices.Sorted(maps.Keys(ourFiles)); !slices.Equal(got, want) {
		t.Errorf("Dockerfile's image holds %v, pkg/harness/image's %v", got, want)
	}
	for path, want := range ourFiles {
		got := dockerFiles[path]
		if got.Mode != want.Mode || got.UID != want.UID || got.GID != want.GID {
			t.Errorf("%s: Dockerfile's %v %d:%d, pkg/harness/image's %v %d:%d", path, got.Mode, got.UID, got.GID, want.Mode, want.UID, want.GID)
		}
		if path != "/hf-provisioner-digitalocean" && want.Mode&fs.ModeType == 0 && !bytes.Equal(got.Data, want.Data) {
			t.Errorf("%s: contents differ", path)
		}
	}

	dc, err := docker.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	oc, err := ours.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if dc.Config.User != oc.Config.User || !slices.Equal(dc.Config.Entrypoint, oc.Config.Entrypoint) || !maps.Equal(dc.Config.Labels, oc.Config.Labels) {
		t.Errorf("Dockerfile's config: user %q entrypoint %q labels %v\npkg/image's: user %q entrypoint %q labels %v",
			dc.Config.User, dc.Config.Entrypoint, dc.Config.Labels, oc.Config.User, oc.Config.Entrypoint, oc.Config.Labels)
	}

	out, err := exec.Command("docker", "run", "--rm", "--read-only", tag, "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), o.Version) {
		t.Errorf("docker run --version: %v %s", err, out)
	}
}

// dockerArch is the Docker engine's architecture, which its build targets.
func dockerArch(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("docker", "version", "-f", "{{.Server.Arch}}").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
