package drain

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/digitalocean/godo"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/sirupsen/logrus"
)

// emptied is what emptyAccount deleted under one token.
type emptied struct {
	droplets, keys int
	// alphaDroplets and alphaKeys are the alpha's records this account held.
	alphaDroplets, alphaKeys []int
}

// emptyAccount deletes, under one token, every droplet carrying the
// installation's tag, every SSH key of its Keys, and the droplets and keys
// the alpha's objects record, and waits until DigitalOcean lists none of
// them.
func emptyAccount(ctx context.Context, tokenValue string, opts Options, keys []*v1alpha1.Key, rec alphaRecords) (emptied, error) {
	// A drain sends a handful of requests per token: no client-side limit,
	// DigitalOcean's 429 and Retry-After pace it (see call).
	client, err := digitalocean.NewClients(opts.APIURL, digitalocean.LimiterOptions{Disabled: true}).For(tokenValue)
	if err != nil {
		return emptied{}, err
	}
	var out emptied
	if out.droplets, out.alphaDroplets, err = emptyDroplets(ctx, client, opts, rec); err != nil {
		return out, err
	}
	out.keys, out.alphaKeys, err = emptyKeys(ctx, client, opts.Poll, keys, rec)
	return out, err
}

// emptyDroplets deletes the account's droplets of the installation (see
// dropletsOf) and waits until DigitalOcean lists none.
func emptyDroplets(ctx context.Context, client *godo.Client, opts Options, rec alphaRecords) (deleted int, alphaFound []int, err error) {
	tag := digitalocean.InstallationTag(opts.InstallationID)
	found, err := dropletsOf(ctx, client, tag, rec)
	if err != nil {
		return 0, nil, err
	}
	tagged := false
	for _, d := range found {
		if _, ok := rec.droplets[d.ID]; ok {
			alphaFound = append(alphaFound, d.ID)
		}
		tagged = tagged || slices.Contains(d.Tags, tag)
	}
	if tagged {
		// One request deletes them all, however they were made.
		if err := call(ctx, func(ctx context.Context) error {
			// No tag: nothing of the installation's is there.
			return ignoreNotFound(digitalocean.DropletsOf(client).DeleteByTag(ctx, tag))
		}); err != nil {
			return 0, alphaFound, fmt.Errorf("deleting droplets tagged %s: %w", tag, err)
		}
		logrus.WithField("tag", tag).Info("droplets tagged with the installation's tag deleted")
	}
	for _, d := range found {
		if slices.Contains(d.Tags, tag) {
			continue
		}
		// Untagged: an alpha droplet no VM of ours took over.
		log := logrus.WithField("vm", rec.droplets[d.ID]).WithField("droplet", d.ID)
		if err := call(ctx, func(ctx context.Context) error {
			return digitalocean.DropletsOf(client).Delete(ctx, d.ID)
		}); err != nil {
			return 0, alphaFound, fmt.Errorf("deleting the original provisioner's droplet %d of VM %s: %w", d.ID, rec.droplets[d.ID], err)
		}
		log.Info("the original provisioner's droplet deleted")
	}
	if len(found) > 0 {
		logrus.WithField("droplets", len(found)).Info("droplets deleted; waiting for DigitalOcean to list none")
	}
	err = until(ctx, opts.Poll, func(ctx context.Context) (string, error) {
		left, err := dropletsOf(ctx, client, tag, rec)
		if err != nil || len(left) == 0 {
			return "", err
		}
		return fmt.Sprintf("DigitalOcean still lists %d droplets of the installation (tagged %s or recorded by the original provisioner)", len(left), tag), nil
	})
	return len(found), alphaFound, err
}

// dropletsOf lists the account's droplets that carry tag or that rec
// records. Without records the tag's list is enough, and far shorter.
func dropletsOf(ctx context.Context, client *godo.Client, tag string, rec alphaRecords) ([]godo.Droplet, error) {
	var all []godo.Droplet
	if err := call(ctx, func(ctx context.Context) (err error) {
		if len(rec.droplets) == 0 {
			all, err = digitalocean.DropletsOf(client).ListByTag(ctx, tag, digitalocean.PriorityDelete)
		} else {
			all, err = digitalocean.DropletsOf(client).List(ctx, digitalocean.PriorityDelete)
		}
		return err
	}); err != nil {
		return nil, fmt.Errorf("listing droplets: %w", err)
	}
	return slices.DeleteFunc(all, func(d godo.Droplet) bool {
		_, recorded := rec.droplets[d.ID]
		return !recorded && !slices.Contains(d.Tags, tag)
	}), nil
}

// emptyKeys deletes the account's SSH keys of the installation (see keysOf)
// and waits until DigitalOcean lists none.
func emptyKeys(ctx context.Context, client *godo.Client, poll time.Duration, keys []*v1alpha1.Key, rec alphaRecords) (deleted int, alphaFound []int, err error) {
	found, err := keysOf(ctx, client, keys, rec)
	if err != nil {
		return 0, nil, err
	}
	for _, key := range found {
		vm, recorded := rec.keys[key.ID]
		if recorded {
			alphaFound = append(alphaFound, key.ID)
		}
		if err := call(ctx, func(ctx context.Context) error {
			return digitalocean.KeysOf(client).Delete(ctx, key.ID, digitalocean.PriorityDelete)
		}); err != nil {
			return deleted, alphaFound, fmt.Errorf("deleting SSH key %d (%s): %w", key.ID, key.Name, err)
		}
		if recorded {
			logrus.WithField("vm", vm).WithField("key", key.ID).Info("the original provisioner's SSH key deleted")
		}
		deleted++
	}
	err = until(ctx, poll, func(ctx context.Context) (string, error) {
		left, err := keysOf(ctx, client, keys, rec)
		if err != nil || len(left) == 0 {
			return "", err
		}
		return fmt.Sprintf("DigitalOcean still lists %d SSH keys of ours", len(left)), nil
	})
	return deleted, alphaFound, err
}

// keysOf lists the account's SSH keys that are the installation's: those its
// Keys record by ID or fingerprint, or name (a create whose answer was lost),
// and those the alpha's Keys record by ID. A Key that adopted the alpha's key
// is matched by ID and fingerprint only: it never sent a create, and its
// name is the alpha's, which a VM of the same name in another namespace on
// the same token has too.
func keysOf(ctx context.Context, client *godo.Client, keys []*v1alpha1.Key, rec alphaRecords) ([]godo.Key, error) {
	ids, fingerprints, names := map[int]bool{}, map[string]bool{}, map[string]bool{}
	for _, k := range keys {
		ids[k.Status.KeyID] = true
		fingerprints[k.Status.Fingerprint] = true
		if k.Spec.AdoptedKeyID == 0 {
			names[k.Spec.Name] = true
		}
	}
	for id := range rec.keys {
		ids[id] = true
	}
	delete(ids, 0)
	delete(fingerprints, "")
	delete(names, "")
	var all []godo.Key
	if err := call(ctx, func(ctx context.Context) (err error) {
		all, err = digitalocean.KeysOf(client).List(ctx, digitalocean.PriorityDelete)
		return err
	}); err != nil {
		return nil, fmt.Errorf("listing SSH keys: %w", err)
	}
	var out []godo.Key
	for _, k := range all {
		if ids[k.ID] || fingerprints[k.Fingerprint] || names[k.Name] {
			out = append(out, k)
		}
	}
	return out, nil
}

// call makes one DigitalOcean call, again after a rate limit or an
// unavailable API, as DigitalOcean's answer says; a refusal (a rejected
// token, a 422) ends it, since trying again changes nothing.
func call(ctx context.Context, do func(context.Context) error) error {
	for {
		callCtx, cancel := digitalocean.CallContext(ctx)
		err := do(callCtx)
		cancel()
		if err == nil {
			return nil
		}
		f := digitalocean.Classify(err)
		if f.Permanent {
			return fmt.Errorf("%s: %s", f.Reason, f.Message)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %s (%w)", f.Reason, f.Message, ctx.Err())
		case <-time.After(min(max(f.RetryAfter, time.Second), 30*time.Second)):
		}
	}
}

// until polls check every poll until it reports nothing left, failing with
// what it last reported when ctx ends.
func until(ctx context.Context, poll time.Duration, check func(context.Context) (string, error)) error {
	for {
		left, err := check(ctx)
		if err != nil {
			return err
		}
		if left == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s (%w)", left, ctx.Err())
		case <-time.After(poll):
		}
	}
}

func ignoreNotFound(err error) error {
	if digitalocean.IsNotFound(err) {
		return nil
	}
	return err
}
