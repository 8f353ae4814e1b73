package drain

import (
	"context"
	"fmt"
	"time"

	"github.com/digitalocean/godo"
	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/digitalocean"
	"github.com/sirupsen/logrus"
)

// emptyAccount deletes, under one token, every droplet carrying the
// installation's tag and every SSH key of its Keys, and waits until
// DigitalOcean lists none of them. It returns how many it deleted.
func emptyAccount(ctx context.Context, tokenValue string, opts Options, keys []*v1alpha1.Key) (droplets, deletedKeys int, err error) {
	// A drain sends a handful of requests per token: no client-side limit,
	// DigitalOcean's 429 and Retry-After pace it (see call).
	client, err := digitalocean.NewClients(opts.APIURL, digitalocean.LimiterOptions{Disabled: true}).For(tokenValue)
	if err != nil {
		return 0, 0, err
	}
	tag := digitalocean.InstallationTag(opts.InstallationID)

	var found []godo.Droplet
	if err := call(ctx, func(ctx context.Context) (err error) {
		found, err = digitalocean.ListByTag(ctx, client, tag)
		return err
	}); err != nil {
		return 0, 0, fmt.Errorf("listing droplets tagged %s: %w", tag, err)
	}
	if len(found) > 0 {
		// One request deletes them all, however they were made.
		if err := call(ctx, func(ctx context.Context) error {
			_, err := client.Droplets.DeleteByTag(ctx, tag)
			return ignoreNotFound(err)
		}); err != nil {
			return 0, 0, fmt.Errorf("deleting droplets tagged %s: %w", tag, err)
		}
		logrus.WithField("tag", tag).WithField("droplets", len(found)).Info("droplets deleted; waiting for DigitalOcean to list none")
	}
	if err := until(ctx, opts.Poll, func(ctx context.Context) (string, error) {
		var left []godo.Droplet
		err := call(ctx, func(ctx context.Context) (err error) {
			left, err = digitalocean.ListByTag(ctx, client, tag)
			return err
		})
		if err != nil || len(left) == 0 {
			return "", err
		}
		return fmt.Sprintf("DigitalOcean still lists %d droplets tagged %s", len(left), tag), nil
	}); err != nil {
		return len(found), 0, err
	}

	ours, err := keysOf(ctx, client, keys)
	if err != nil {
		return len(found), 0, err
	}
	for _, key := range ours {
		if err := call(ctx, func(ctx context.Context) error {
			_, err := client.Keys.DeleteByID(ctx, key.ID)
			return ignoreNotFound(err)
		}); err != nil {
			return len(found), deletedKeys, fmt.Errorf("deleting SSH key %d (%s): %w", key.ID, key.Name, err)
		}
		deletedKeys++
	}
	err = until(ctx, opts.Poll, func(ctx context.Context) (string, error) {
		left, err := keysOf(ctx, client, keys)
		if err != nil || len(left) == 0 {
			return "", err
		}
		return fmt.Sprintf("DigitalOcean still lists %d SSH keys of ours", len(left)), nil
	})
	return len(found), deletedKeys, err
}

// keysOf lists the account's SSH keys that are the installation's: those its
// Keys record by ID or fingerprint, or name (a create whose answer was lost).
func keysOf(ctx context.Context, client *godo.Client, keys []*v1alpha1.Key) ([]godo.Key, error) {
	ids, fingerprints, names := map[int]bool{}, map[string]bool{}, map[string]bool{}
	for _, k := range keys {
		ids[k.Status.KeyID] = true
		fingerprints[k.Status.Fingerprint] = true
		names[k.Spec.Name] = true
	}
	delete(ids, 0)
	delete(fingerprints, "")
	delete(names, "")
	var all []godo.Key
	if err := call(ctx, func(ctx context.Context) (err error) {
		all, err = digitalocean.ListKeys(ctx, client)
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
		callCtx, cancel := digitalocean.CallContext(ctx, digitalocean.PriorityDelete)
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
