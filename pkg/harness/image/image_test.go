package image_test

import (
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image/imagetest"
)

func TestIndexHoldsOneImagePerPlatform(t *testing.T) {
	idx := quickIndex(t)
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != "application/vnd.oci.image.index.v1+json" {
		t.Errorf("index media type %q, want OCI", m.MediaType)
	}
	var platforms []string
	for _, d := range m.Manifests {
		platforms = append(platforms, d.Platform.String())
		if d.MediaType != "application/vnd.oci.image.manifest.v1+json" {
			t.Errorf("%s: manifest media type %q, want OCI", d.Platform, d.MediaType)
		}
	}
	if want := []string{"linux/amd64", "linux/arm64"}; !slices.Equal(platforms, want) {
		t.Errorf("platforms %v, want %v", platforms, want)
	}
}

func TestImageConfigRunsTheBinaryAsNonRoot(t *testing.T) {
	o := quickOptions()
	for _, arch := range []string{"amd64", "arm64"} {
		img, err := imagetest.PlatformImage(quickIndex(t), arch)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		c := cf.Config
		if cf.OS != "linux" || cf.Architecture != arch {
			t.Errorf("%s: config platform %s/%s", arch, cf.OS, cf.Architecture)
		}
		if !slices.Equal(c.Entrypoint, []string{"/hf-provisioner-digitalocean"}) || len(c.Cmd) != 0 {
			t.Errorf("%s: entrypoint %q cmd %q, want the binary alone", arch, c.Entrypoint, c.Cmd)
		}
		if c.User != "65532:65532" {
			t.Errorf("%s: user %q, want 65532:65532", arch, c.User)
		}
		want := map[string]string{
			"org.opencontainers.image.title":       "hf-provisioner-digitalocean",
			"org.opencontainers.image.description": "Provisions HobbyFarm VirtualMachines as DigitalOcean droplets",
			"org.opencontainers.image.source":      "https://github.com/hobbyfarm/hf-provisioner-digitalocean",
			"org.opencontainers.image.version":     o.Version,
			"org.opencontainers.image.revision":    o.Revision,
		}
		if !maps.Equal(c.Labels, want) {
			t.Errorf("%s: labels %v, want %v", arch, c.Labels, want)
		}
		if !cf.Created.Equal(created) {
			t.Errorf("%s: created %v, want %v", arch, cf.Created, created)
		}
		for _, h := range cf.History {
			if !h.Created.Equal(created) {
				t.Errorf("%s: history entry %q created %v, want %v", arch, h.CreatedBy, h.Created, created)
			}
		}
	}
}

func TestImageFilesystem(t *testing.T) {
	img, err := imagetest.PlatformImage(quickIndex(t), "arm64")
	if err != nil {
		t.Fatal(err)
	}
	files, err := imagetest.Files(img)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]fs.FileMode{
		"/etc":                               fs.ModeDir | 0o755,
		"/etc/group":                         0o644,
		"/etc/passwd":                        0o644,
		"/etc/ssl":                           fs.ModeDir | 0o755,
		"/etc/ssl/certs":                     fs.ModeDir | 0o755,
		"/etc/ssl/certs/ca-certificates.crt": 0o644,
		"/hf-provisioner-digitalocean":       0o755,
		"/tmp":                               fs.ModeDir | fs.ModeSticky | 0o777,
	}
	got := map[string]fs.FileMode{}
	for path, f := range files {
		got[path] = f.Mode
		if f.UID != 0 || f.GID != 0 {
			t.Errorf("%s: owner %d:%d, want 0:0", path, f.UID, f.GID)
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("files and modes:\n got %v\nwant %v", got, want)
	}
	if b := string(files["/hf-provisioner-digitalocean"].Data); b != "binary 1.2.3 arm64" {
		t.Errorf("binary is %q, want the arm64 build of 1.2.3", b)
	}
	if !slices.Contains(strings.Split(string(files["/etc/passwd"].Data), "\n"), "nonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin") {
		t.Errorf("/etc/passwd has no nonroot user 65532:\n%s", files["/etc/passwd"].Data)
	}
	if !slices.Contains(strings.Split(string(files["/etc/group"].Data), "\n"), "nonroot:x:65532:") {
		t.Errorf("/etc/group has no nonroot group 65532:\n%s", files["/etc/group"].Data)
	}
}

func TestLayerEntriesAreSortedWithTheBuildTime(t *testing.T) {
	img, err := imagetest.PlatformImage(quickIndex(t), "amd64")
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range layers {
		hdrs, err := imagetest.LayerHeaders(l)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, h := range hdrs {
			names = append(names, h.Name)
			if !h.ModTime.Equal(created) || h.Uname != "" || h.Gname != "" {
				t.Errorf("layer %d: %s: mtime %v, owner names %q %q; want %v and none", i, h.Name, h.ModTime, h.Uname, h.Gname, created)
			}
		}
		if !slices.IsSorted(names) {
			t.Errorf("layer %d entries not sorted: %v", i, names)
		}
	}
}

func TestSameInputsSameDigest(t *testing.T) {
	first, second := digest(t, quickIndex(t)), digest(t, quickIndex(t))
	if first != second {
		t.Errorf("two builds of the same inputs: %s and %s", first, second)
	}
	o := quickOptions()
	o.Created = o.Created.Add(time.Second)
	if later, err := image.Build(t.Context(), o); err != nil {
		t.Fatal(err)
	} else if digest(t, later) == first {
		t.Errorf("the digest ignores the build time")
	}
}

func TestBuildRejectsAVersionThatIsNoTag(t *testing.T) {
	o := quickOptions()
	o.Version = "1.0.0+build"
	if _, err := image.Build(t.Context(), o); err == nil || !strings.Contains(err.Error(), "not a valid image tag") {
		t.Errorf("version 1.0.0+build: err %v, want a refusal", err)
	}
}
