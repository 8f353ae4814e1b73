package chart

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image/imagetest"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/testenv"
	appsv1 "k8s.io/api/apps/v1"
)

// TestImageBinaryAndChartAgreeOnTheVersion builds the image as scripts/image
// does by default (for this machine's platform) and checks that the
// binary's --version, the image's version label and the chart's appVersion,
// which tags the image the chart runs, are one version. It compiles the
// controller: not under -short.
func TestImageBinaryAndChartAgreeOnTheVersion(t *testing.T) {
	testenv.SkipUnlessFull(t)
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	o, err := image.Defaults(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	o.Platforms = []v1.Platform{{OS: "linux", Architecture: runtime.GOARCH}}
	idx, err := image.Build(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	img, err := imagetest.PlatformImage(idx, runtime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	files, err := imagetest.Files(img)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), image.BinaryName)
	if err := os.WriteFile(bin, files["/"+image.BinaryName].Data, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", image.BinaryName, err, out)
	}

	var d appsv1.Deployment
	only(t, render(t, release, "team-a"), "Deployment").into(t, &d)
	appVersion := d.Labels["app.kubernetes.io/version"]
	ref := controller(t, &d).Image
	tag := ref[strings.LastIndex(ref, ":")+1:]
	for what, got := range map[string]string{
		"binary --version":    strings.TrimSpace(string(out)),
		"image version label": image.BinaryName + " " + cf.Config.Labels["org.opencontainers.image.version"],
		"chart's image tag":   image.BinaryName + " " + tag,
		"chart's appVersion":  image.BinaryName + " " + appVersion,
	} {
		if want := image.BinaryName + " " + appVersion; got != want || appVersion == "" {
			t.Errorf("%s: %q, want %q (the chart's appVersion)", what, got, want)
		}
	}
}
