package image

import (
	"context"
	"fmt"
	"regexp"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Repository is where releases publish the image; the chart's default image.repository.
const Repository = "ghcr.io/hobbyfarm/hf-provisioner-digitalocean"

// Options say what to build.
type Options struct {
	// SourceDir is the module root, holding main.go and the chart.
	SourceDir string
	// Version is stamped into the binary (main.Version) and the version label,
	// and is the image tag.
	Version string
	// Revision is the git commit the image is built from (the revision label).
	Revision string
	// Created is every timestamp in the image: config, history and files.
	Created time.Time
	// Platforms to build; each gets its own binary and image in the index.
	Platforms []v1.Platform
	// Binary builds the controller binary for a platform; nil means GoBuild.
	Binary func(ctx context.Context, o Options, p v1.Platform) ([]byte, error)
}

// DefaultPlatforms are what scripts/image and releases build.
var DefaultPlatforms = []v1.Platform{
	{OS: "linux", Architecture: "amd64"},
	{OS: "linux", Architecture: "arm64"},
}

// tagPattern is what a registry accepts as a tag; the version is one.
var tagPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

func (o Options) validate() error {
	if err := validVersion(o.Version); err != nil {
		return err
	}
	if o.Revision == "" {
		return fmt.Errorf("no revision (git commit)")
	}
	if o.Created.IsZero() {
		return fmt.Errorf("no creation time")
	}
	if len(o.Platforms) == 0 {
		return fmt.Errorf("no platforms")
	}
	return nil
}

func validVersion(v string) error {
	if !tagPattern.MatchString(v) {
		return fmt.Errorf("version %q is not a valid image tag (letters, digits, '_', '.', '-')", v)
	}
	return nil
}

// Labels are the image config's OCI labels. The Dockerfile sets the same.
func Labels(o Options) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "hf-provisioner-digitalocean",
		"org.opencontainers.image.description": "Provisions HobbyFarm VirtualMachines as DigitalOcean droplets",
		"org.opencontainers.image.source":      "https://github.com/hobbyfarm/hf-provisioner-digitalocean",
		"org.opencontainers.image.version":     o.Version,
		"org.opencontainers.image.revision":    o.Revision,
	}
}
