// Command image builds the controller's OCI image with no container engine
// (see package image). Run it from the module root; scripts/image does.
//
//	image build [flags]       multi-platform image: an OCI layout and an OCI
//	                          archive under --out, optionally pushed (--push)
//	image tree --out DIR      one platform's filesystem in a directory, for
//	                          the Dockerfile to COPY into a scratch image
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/harness/image"
)

const usage = "usage: image build [--out DIR] [--version V] [--platforms linux/amd64,linux/arm64] [--repository R] [--push]\n" +
	"       image tree --out DIR [--version V] [--arch ARCH]"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		if errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, usage)
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("bad arguments")

func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errUsage
	}
	switch args[0] {
	case "build":
		return build(ctx, args[1:], stdout)
	case "tree":
		return tree(ctx, args[1:])
	default:
		return fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
}

func build(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	out := fs.String("out", "_output/image", "directory for the OCI layout (oci/), the OCI archive and the digest")
	version := fs.String("version", "", "version stamped into the binary and labels, and the tag (default: the chart's appVersion)")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "comma-separated platforms")
	repository := fs.String("repository", image.Repository, "repository the image is named (and pushed) as")
	push := fs.Bool("push", false, "push to <repository>:<version> (credentials: GITHUB_TOKEN for ghcr.io, else docker login's)")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	ps, err := parsePlatforms(*platforms)
	if err != nil {
		return err
	}
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	o, err := image.Defaults(ctx, dir)
	if err != nil {
		return err
	}
	o.Platforms = ps
	if *version != "" {
		o.Version = *version
	}
	ref, err := name.NewTag(*repository + ":" + o.Version)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "image: building %s for %s (revision %s)\n", ref, *platforms, o.Revision)
	idx, err := image.Build(ctx, o)
	if err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	if *out, err = filepath.Abs(*out); err != nil {
		return err
	}
	layoutDir := filepath.Join(*out, "oci")
	archive := filepath.Join(*out, image.BinaryName+"-"+o.Version+".oci.tar")
	if err := image.WriteLayout(layoutDir, idx, ref); err != nil {
		return err
	}
	if err := image.WriteArchive(layoutDir, archive, o.Created); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, "digest"), []byte(digest.String()+"\n"), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ref     %s\ndigest  %s\nlayout  %s\narchive %s\n", ref, digest, layoutDir, archive)
	if *push {
		if err := image.Push(ctx, idx, ref); err != nil {
			return fmt.Errorf("push %s: %w", ref, err)
		}
		fmt.Fprintf(stdout, "pushed  %s@%s\n", ref.Context(), digest)
	}
	return nil
}

// tree needs no git: a Docker build context may lack .git.
func tree(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("tree", flag.ContinueOnError)
	out := fs.String("out", "", "directory to write the filesystem into")
	version := fs.String("version", "", "version stamped into the binary (default: the chart's appVersion)")
	arch := fs.String("arch", runtime.GOARCH, "linux architecture")
	if err := fs.Parse(args); err != nil || *out == "" {
		return errUsage
	}
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	o := image.Options{SourceDir: dir, Version: *version}
	if o.Version == "" {
		if o.Version, err = image.ChartAppVersion(dir); err != nil {
			return err
		}
	}
	return image.WriteTree(ctx, o, v1.Platform{OS: "linux", Architecture: *arch}, *out)
}

func parsePlatforms(list string) ([]v1.Platform, error) {
	var ps []v1.Platform
	for _, s := range strings.Split(list, ",") {
		p, err := v1.ParsePlatform(strings.TrimSpace(s))
		if err != nil {
			return nil, err
		}
		if p.OS != "linux" {
			return nil, fmt.Errorf("platform %q: the image is for linux only", s)
		}
		ps = append(ps, *p)
	}
	return ps, nil
}
