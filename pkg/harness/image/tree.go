package image

import (
	"context"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// WriteTree writes the image's filesystem for p into dir, for the
// Dockerfile to COPY into a scratch image: the same files and modes as
// Build's layers (the COPY makes root their owner, as in the layers).
func WriteTree(ctx context.Context, o Options, p v1.Platform, dir string) error {
	if err := validVersion(o.Version); err != nil {
		return err
	}
	if o.Binary == nil {
		o.Binary = GoBuild
	}
	sys, err := systemFiles()
	if err != nil {
		return err
	}
	bin, err := o.Binary(ctx, o, p)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range sortedByPath(append(sys, binaryFiles(bin)...)) {
		path := filepath.Join(dir, f.path)
		if f.mode.IsDir() {
			if err := os.MkdirAll(path, 0o755); err != nil {
				return err
			}
		} else if err := os.WriteFile(path, f.data, 0o600); err != nil {
			return err
		}
		// Chmod, not the create modes, so the umask changes nothing.
		if err := os.Chmod(path, f.mode); err != nil {
			return err
		}
	}
	return nil
}
