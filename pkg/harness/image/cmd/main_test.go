package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
)

// TestBuildWritesWhatItPrints runs the build command as scripts/image does,
// for this machine's platform: the layout, the archive and the digest it
// prints are there. It compiles the controller: not under -short.
func TestBuildWritesWhatItPrints(t *testing.T) {
	testenv.SkipUnlessFull(t)
	t.Chdir(filepath.Join("..", "..", "..", ".."))
	out := t.TempDir()
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"build", "--out", out, "--platforms", "linux/" + runtime.GOARCH}, &stdout); err != nil {
		t.Fatal(err)
	}
	printed := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if key, value, ok := strings.Cut(line, " "); ok {
			printed[key] = strings.TrimSpace(value)
		}
	}
	if !strings.HasPrefix(printed["ref"], "ghcr.io/hobbyfarm/hf-provisioner-digitalocean:") {
		t.Errorf("ref %q", printed["ref"])
	}
	digestFile, err := os.ReadFile(filepath.Join(out, "digest"))
	if err != nil || strings.TrimSpace(string(digestFile)) != printed["digest"] {
		t.Errorf("digest file %q (%v), printed %q", digestFile, err, printed["digest"])
	}
	top, err := layout.ImageIndexFromPath(printed["layout"])
	if err != nil {
		t.Fatalf("layout %q: %v", printed["layout"], err)
	}
	if m, err := top.IndexManifest(); err != nil || len(m.Manifests) != 1 || m.Manifests[0].Digest.String() != printed["digest"] {
		t.Errorf("layout's index.json does not point at the printed digest: %+v %v", m, err)
	}
	if info, err := os.Stat(printed["archive"]); err != nil || info.Size() == 0 {
		t.Errorf("archive %q: %v", printed["archive"], err)
	}
}

func TestRejectsUnknownCommandsAndPlatforms(t *testing.T) {
	for _, args := range [][]string{nil, {"bake"}, {"build", "--platforms", "windows/amd64"}, {"tree"}} {
		if err := run(context.Background(), args, &bytes.Buffer{}); err == nil {
			t.Errorf("image %q succeeded", args)
		}
	}
}
