package digitalocean

import (
	"context"
	"strconv"

	"github.com/digitalocean/godo"
)

// The services below are how the controllers reach DigitalOcean's droplets,
// SSH keys and tags: one per resource, over a token's client (and so its
// rate limiter). Each says once what DigitalOcean's answers mean, so no
// handler decides it again: what DigitalOcean does not know is gone, so a
// read of it finds nothing and a delete of it is done, unless a method says
// why its caller must see the 404.
//
// Each call also carries its priority for the rate limiter (see Priority).
// Where the call alone decides it, the method sets it: a droplet's delete
// is a delete, a key's register a create, a tag's delete or list tidying.
// Where one call serves several uses (reading a droplet to create, to
// resync or to delete it; deleting a key whose droplet exists or one nobody
// owns), the caller names the use's priority as the last argument.
// Droplets is the droplet service of one token.
type Droplets struct{ client *godo.Client }

// DropletsOf is client's droplet service.
func DropletsOf(client *godo.Client) Droplets { return Droplets{client} }

// Get reads droplet id; nil, and no error, when it is gone.
func (s Droplets) Get(ctx context.Context, id int, p Priority) (*godo.Droplet, error) {
	d, _, err := s.client.Droplets.Get(WithPriority(ctx, p), id)
	if IsNotFound(err) {
		return nil, nil
	}
	return d, err
}

// Create sends a create of one droplet (never repeated: see Clients), at
// PriorityCreate for a VM's, PriorityPool for a warm pool's.
func (s Droplets) Create(ctx context.Context, req *godo.DropletCreateRequest, p Priority) (*godo.Droplet, error) {
	d, _, err := s.client.Droplets.Create(WithPriority(ctx, p), req)
	return d, err
}

// CreateMultiple sends a create of up to ten droplets (never repeated).
func (s Droplets) CreateMultiple(ctx context.Context, req *godo.DropletMultiCreateRequest, p Priority) ([]godo.Droplet, error) {
	ds, _, err := s.client.Droplets.CreateMultiple(WithPriority(ctx, p), req)
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
	_, err = s.client.Droplets.Delete(WithPriority(ctx, PriorityDelete), id)
	return !IsNotFound(err), ignoreGone(err)
}

// DeleteByTag deletes every droplet tagged tag. Every error passes on as
// it is, a 404 too: whether nothing under the tag is a success (an empty
// installation) or not (a batch just tagged) only the caller can tell.
func (s Droplets) DeleteByTag(ctx context.Context, tag string) error {
	_, err := s.client.Droplets.DeleteByTag(WithPriority(ctx, PriorityDelete), tag)
	return err
}

// Tag puts tag on the droplets ids with two requests, whatever their
// number: it creates the tag (DigitalOcean tags resources only with a tag
// that exists; creating one that exists answers with it), then tags them
// all at once. A 404 means a droplet (or the tag) is gone.
func (s Droplets) Tag(ctx context.Context, tag string, ids []int, p Priority) error {
	if _, _, err := s.client.Tags.Create(WithPriority(ctx, p), &godo.TagCreateRequest{Name: tag}); err != nil {
		return err
	}
	return s.TagMore(ctx, tag, ids, p)
}

// TagMore puts tag, which exists, on the droplets ids with one request
// (see Tag).
func (s Droplets) TagMore(ctx context.Context, tag string, ids []int, p Priority) error {
	resources := make([]godo.Resource, len(ids))
	for i, id := range ids {
		resources[i] = godo.Resource{ID: strconv.Itoa(id), Type: godo.DropletResourceType}
	}
	_, err := s.client.Tags.TagResources(WithPriority(ctx, p), tag, &godo.TagResourcesRequest{Resources: resources})
	return err
}

// ListByTag pages through every droplet carrying tag (godo returns one
// page a call). The pages after the first go one priority up, as every
// list's here: one page held back wastes the pages before it, and with
// many re-reads waiting for room every freed slot would go to a new list's
// first page that never finished.
func (s Droplets) ListByTag(ctx context.Context, tag string, p Priority) ([]godo.Droplet, error) {
	return listPages(WithPriority(ctx, p), 200, raisePriority, func(ctx context.Context, opt *godo.ListOptions) ([]godo.Droplet, *godo.Response, error) {
		return s.client.Droplets.ListByTag(ctx, tag, opt)
	})
}

// ListSummariesByTag is ListByTag decoding of each droplet only its
// summary (see summary).
func (s Droplets) ListSummariesByTag(ctx context.Context, tag string, p Priority) ([]godo.Droplet, error) {
	return listPages(WithPriority(ctx, p), SummariesPerPage, raisePriority, func(ctx context.Context, opt *godo.ListOptions) ([]godo.Droplet, *godo.Response, error) {
		return summariesPage(ctx, s.client, tag, opt)
	})
}

// ListByName lists the droplets named name: DigitalOcean matches the
// whole name, ignoring case.
func (s Droplets) ListByName(ctx context.Context, name string, p Priority) ([]godo.Droplet, error) {
	return listPages(WithPriority(ctx, p), 200, raisePriority, func(ctx context.Context, opt *godo.ListOptions) ([]godo.Droplet, *godo.Response, error) {
		return s.client.Droplets.ListByName(ctx, name, opt)
	})
}

// List pages through every droplet of the account.
func (s Droplets) List(ctx context.Context, p Priority) ([]godo.Droplet, error) {
	return listPages(WithPriority(ctx, p), 200, raisePriority, s.client.Droplets.List)
}

// Keys is the SSH key service of one token.
type Keys struct{ client *godo.Client }

// KeysOf is client's SSH key service.
func KeysOf(client *godo.Client) Keys { return Keys{client} }

// Create registers publicKey under name, at PriorityCreate: a droplet waits
// for it.
func (s Keys) Create(ctx context.Context, name, publicKey string) (*godo.Key, error) {
	k, _, err := s.client.Keys.Create(WithPriority(ctx, PriorityCreate), &godo.KeyCreateRequest{Name: name, PublicKey: publicKey})
	return k, err
}

// GetByFingerprint reads the key of fingerprint. Its 404 is passed on:
// it is asked for a key DigitalOcean just said it has, so one gone in
// between is a failure to retry. At PriorityCreate, as the create it
// completes.
func (s Keys) GetByFingerprint(ctx context.Context, fingerprint string) (*godo.Key, error) {
	k, _, err := s.client.Keys.GetByFingerprint(WithPriority(ctx, PriorityCreate), fingerprint)
	return k, err
}

// Delete deletes key id; one gone already counts as deleted.
func (s Keys) Delete(ctx context.Context, id int, p Priority) error {
	_, err := s.DeleteHeld(ctx, id, p)
	return err
}

// DeleteHeld deletes key id and says whether the token's account held it
// (see Droplets.DeleteHeld).
func (s Keys) DeleteHeld(ctx context.Context, id int, p Priority) (held bool, err error) {
	_, err = s.client.Keys.DeleteByID(WithPriority(ctx, p), id)
	return !IsNotFound(err), ignoreGone(err)
}

// DeleteByFingerprint deletes the key of fingerprint; none counts as
// deleted.
func (s Keys) DeleteByFingerprint(ctx context.Context, fingerprint string, p Priority) error {
	_, err := s.client.Keys.DeleteByFingerprint(WithPriority(ctx, p), fingerprint)
	return ignoreGone(err)
}

// List pages through every SSH key of the account.
func (s Keys) List(ctx context.Context, p Priority) ([]godo.Key, error) {
	return listPages(WithPriority(ctx, p), 200, raisePriority, s.client.Keys.List)
}

// Tags is the tag service of one token.
type Tags struct{ client *godo.Client }

// TagsOf is client's tag service.
func TagsOf(client *godo.Client) Tags { return Tags{client} }

// Delete deletes tag, at PriorityTidy; one gone already counts as deleted.
func (s Tags) Delete(ctx context.Context, tag string) error {
	_, err := s.client.Tags.Delete(WithPriority(ctx, PriorityTidy), tag)
	return ignoreGone(err)
}

// List pages through every tag of the account with its counts, at
// PriorityTidy: only the tag tidy lists them.
func (s Tags) List(ctx context.Context) ([]godo.Tag, error) {
	return listPages(WithPriority(ctx, PriorityTidy), 200, raisePriority, s.client.Tags.List)
}

// ignoreGone is err, unless it says DigitalOcean does not know the
// resource.
func ignoreGone(err error) error {
	if IsNotFound(err) {
		return nil
	}
	return err
}
