package digitalocean

import (
	"context"

	"github.com/digitalocean/godo"
)

// The services below are how the controllers reach DigitalOcean's droplets,
// SSH keys and tags: one per resource, over a token's client (and so its
// rate limiter and priorities). Each says once what DigitalOcean's answers
// mean, so no handler decides it again: what DigitalOcean does not know is
// gone, so a read of it finds nothing and a delete of it is done, unless a
// method says why its caller must see the 404.

// Droplets is the droplet service of one token.
type Droplets struct{ client *godo.Client }

// DropletsOf is client's droplet service.
func DropletsOf(client *godo.Client) Droplets { return Droplets{client} }

// Get reads droplet id; nil, and no error, when it is gone.
func (s Droplets) Get(ctx context.Context, id int) (*godo.Droplet, error) {
	d, _, err := s.client.Droplets.Get(ctx, id)
	if IsNotFound(err) {
		return nil, nil
	}
	return d, err
}

// Create sends a create of one droplet (never repeated: see Clients).
func (s Droplets) Create(ctx context.Context, req *godo.DropletCreateRequest) (*godo.Droplet, error) {
	d, _, err := s.client.Droplets.Create(ctx, req)
	return d, err
}

// CreateMultiple sends a create of up to ten droplets (never repeated).
func (s Droplets) CreateMultiple(ctx context.Context, req *godo.DropletMultiCreateRequest) ([]godo.Droplet, error) {
	ds, _, err := s.client.Droplets.CreateMultiple(ctx, req)
	return ds, err
}

// Delete deletes droplet id; one gone already counts as deleted.
func (s Droplets) Delete(ctx context.Context, id int) error {
	_, err := s.DeleteHeld(ctx, id)
	return err
}

// DeleteHeld deletes droplet id and says whether the token's account held
// it: an account answers 404 for a droplet that is gone and for one of
// another account alike.
func (s Droplets) DeleteHeld(ctx context.Context, id int) (held bool, err error) {
	_, err = s.client.Droplets.Delete(ctx, id)
	return !IsNotFound(err), ignoreGone(err)
}

// DeleteByTag deletes every droplet tagged tag. Every error passes on as
// it is, a 404 too: whether nothing under the tag is a success (an empty
// installation) or not (a batch just tagged) only the caller can tell.
func (s Droplets) DeleteByTag(ctx context.Context, tag string) error {
	_, err := s.client.Droplets.DeleteByTag(ctx, tag)
	return err
}

// Keys is the SSH key service of one token.
type Keys struct{ client *godo.Client }

// KeysOf is client's SSH key service.
func KeysOf(client *godo.Client) Keys { return Keys{client} }

// Create registers publicKey under name.
func (s Keys) Create(ctx context.Context, name, publicKey string) (*godo.Key, error) {
	k, _, err := s.client.Keys.Create(ctx, &godo.KeyCreateRequest{Name: name, PublicKey: publicKey})
	return k, err
}

// GetByFingerprint reads the key of fingerprint. Its 404 is passed on:
// it is asked for a key DigitalOcean just said it has, so one gone in
// between is a failure to retry.
func (s Keys) GetByFingerprint(ctx context.Context, fingerprint string) (*godo.Key, error) {
	k, _, err := s.client.Keys.GetByFingerprint(ctx, fingerprint)
	return k, err
}

// Delete deletes key id; one gone already counts as deleted.
func (s Keys) Delete(ctx context.Context, id int) error {
	_, err := s.DeleteHeld(ctx, id)
	return err
}

// DeleteHeld deletes key id and says whether the token's account held it
// (see Droplets.DeleteHeld).
func (s Keys) DeleteHeld(ctx context.Context, id int) (held bool, err error) {
	_, err = s.client.Keys.DeleteByID(ctx, id)
	return !IsNotFound(err), ignoreGone(err)
}

// DeleteByFingerprint deletes the key of fingerprint; none counts as
// deleted.
func (s Keys) DeleteByFingerprint(ctx context.Context, fingerprint string) error {
	_, err := s.client.Keys.DeleteByFingerprint(ctx, fingerprint)
	return ignoreGone(err)
}

// Tags is the tag service of one token.
type Tags struct{ client *godo.Client }

// TagsOf is client's tag service.
func TagsOf(client *godo.Client) Tags { return Tags{client} }

// Delete deletes tag; one gone already counts as deleted.
func (s Tags) Delete(ctx context.Context, tag string) error {
	_, err := s.client.Tags.Delete(ctx, tag)
	return ignoreGone(err)
}

// ignoreGone is err, unless it says DigitalOcean does not know the
// resource.
func ignoreGone(err error) error {
	if IsNotFound(err) {
		return nil
	}
	return err
}
