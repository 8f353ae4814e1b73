package app

import (
	"context"
	"errors"
	"time"

	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/alpha"
	provcontrollers "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/generated/controllers/provisioning.hobbyfarm.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// leaseHeld reports whether a leader currently holds the lease.
func leaseHeld(client kubernetes.Interface, namespace, name string) func(context.Context) error {
	return func(ctx context.Context) error {
		lease, err := client.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		spec := lease.Spec
		if spec.HolderIdentity == nil || *spec.HolderIdentity == "" || spec.RenewTime == nil || spec.LeaseDurationSeconds == nil {
			return errors.New("no leader holds lease " + name)
		}
		if time.Since(spec.RenewTime.Time) > time.Duration(*spec.LeaseDurationSeconds)*time.Second {
			return errors.New("lease " + name + " expired")
		}
		return nil
	}
}

// countByStatus counts Droplets by DigitalOcean status for the droplet gauge.
func countByStatus(cache provcontrollers.DropletCache) func() map[string]int {
	return func() map[string]int {
		out := map[string]int{}
		all, err := cache.List("", labels.Everything())
		if err != nil {
			return out
		}
		for _, d := range all {
			if alpha.IsDroplet(d) {
				continue // the original provisioner's record: a Droplet of ours counts its droplet
			}
			status := d.Status.Status
			if status == "" {
				status = "pending"
			}
			out[status]++
		}
		return out
	}
}
