package playground

import (
	"context"
	"fmt"
	"strconv"
	"time"

	v1alpha1 "github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/apis/provisioning.hobbyfarm.io/v1alpha1"
	"github.com/hobbyfarm/hf-provisioner-digitalocean/pkg/config"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// eventSeats is the playground event's required VMs of its template: room
// for the VMs made at start, those of `vm add` and the pool, so that the
// seats cap never hides the pool here.
const eventSeats = 100

// CheckWarmPool accepts what --warm-pool may be: a size from 1 to
// config.MaxWarmPool, or "auto".
func CheckWarmPool(value string) error {
	if value == "" || value == config.WarmPoolAuto {
		return nil
	}
	if n, err := strconv.Atoi(value); err != nil || n < 1 || n > config.MaxWarmPool {
		return fmt.Errorf("--warm-pool %q: want a size from 1 to %d, or %s", value, config.MaxWarmPool, config.WarmPoolAuto)
	}
	return nil
}

// poolSettings are the Environment's settings that ask for the pool.
func (o *Options) poolSettings() map[string]string {
	if o.WarmPool == "" {
		return nil
	}
	return map[string]string{config.KeyWarmPool: o.WarmPool}
}

// fillPool starts the event a warm pool serves and waits until the pool is
// ready, printing its progress, so that the VMs made next take its droplets.
func (p *playground) fillPool(ctx context.Context) error {
	if p.opts.WarmPool == "" {
		return nil
	}
	required := map[string]map[string]int{EnvName: {TemplateName: eventSeats}}
	if _, err := p.hf.StartEvent(Namespace, EventName, required); err != nil {
		return fmt.Errorf("starting scheduled event %s: %w", EventName, err)
	}
	fmt.Fprintf(p.out, "scheduled event %s running (%d seats); warm_pool %s: waiting for the pool's droplets\n", EventName, eventSeats, p.opts.WarmPool)
	ctx, cancel := context.WithTimeout(ctx, runningTimeout)
	defer cancel()
	shown := ""
	for {
		pool, err := p.pool()
		if err == nil && pool != nil {
			s := pool.Status
			line := fmt.Sprintf("warm pool %s: %d ready, %d booting, wanted %d", pool.Name, s.Ready, s.Booting, s.Wanted)
			if line != shown {
				fmt.Fprintln(p.out, line)
				shown = line
			}
			if s.Wanted > 0 && s.Ready >= s.Wanted {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("warm pool not ready after %s (last: %s); the controller's log says why", runningTimeout, shown)
		case <-time.After(pollInterval):
		}
	}
}

// pool is the playground template's WarmPool, nil before the controller made it.
func (p *playground) pool() (*v1alpha1.WarmPool, error) {
	list, err := p.pools.List(Namespace, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range list.Items {
		if list.Items[i].Spec.Environment == EnvName && list.Items[i].Spec.Template == TemplateName {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

// reportClaims says how many of the VMs took a droplet from the pool, and
// how to watch the pool.
func (p *playground) reportClaims(names []string) {
	if p.opts.WarmPool == "" {
		return
	}
	claimed := 0
	for _, name := range names {
		if d, err := p.droplets.Get(Namespace, name, metav1.GetOptions{}); err == nil && d.Spec.ClaimedDropletID != 0 {
			claimed++
		}
	}
	p.opts.Result.Claimed = claimed
	fmt.Fprintf(p.out, "%d of %d VMs took a droplet from the warm pool (Event %s on the VM); the pool refills:\n", claimed, len(names), "ClaimedFromPool")
	fmt.Fprintf(p.out, "kubectl get warmpools -n %s\n", Namespace)
}

// endPoolEvent ends the event the pool serves, as Gargantua does at its end
// time, so the pool drains along with the VMs.
func (p *playground) endPoolEvent() error {
	if p.opts.WarmPool == "" {
		return nil
	}
	fmt.Fprintf(p.out, "ending scheduled event %s (its warm pool drains)\n", EventName)
	if _, err := p.hf.EndEvent(Namespace, EventName); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("ending scheduled event %s: %w", EventName, err)
	}
	return nil
}
