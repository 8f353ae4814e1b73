package image

import (
	"cmp"
	"context"
	"os"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Push uploads idx, its images and layers to ref. Credentials for ghcr.io
// come from GITHUB_TOKEN (and GITHUB_ACTOR) when set, as in a GitHub
// Actions workflow; otherwise from the Docker config (docker login).
func Push(ctx context.Context, idx v1.ImageIndex, ref name.Reference) error {
	keychain := authn.NewMultiKeychain(gitHubToken{}, authn.DefaultKeychain)
	return remote.WriteIndex(ref, idx, remote.WithContext(ctx), remote.WithAuthFromKeychain(keychain))
}

// gitHubToken authenticates to ghcr.io with a workflow's GITHUB_TOKEN.
type gitHubToken struct{}

func (gitHubToken) Resolve(r authn.Resource) (authn.Authenticator, error) {
	token := os.Getenv("GITHUB_TOKEN")
	if r.RegistryStr() != "ghcr.io" || token == "" {
		return authn.Anonymous, nil
	}
	return &authn.Basic{Username: cmp.Or(os.Getenv("GITHUB_ACTOR"), "github-actions"), Password: token}, nil
}
