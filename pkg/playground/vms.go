package playground

import (
	"context"
	"fmt"
	"strings"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func (p *playground) createVMs() ([]string, error) {
	fmt.Fprintf(p.out, "creating %d VMs in environment %s\n", p.opts.VMs, EnvName)
	names := make([]string, p.opts.VMs)
	for i := range names {
		names[i] = fmt.Sprintf("pg-vm-%d", i+1)
		if _, err := p.hf.CreateVM(Namespace, names[i], p.hfEnv, TemplateName, "digitalocean"); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// vmState is what a status line shows: the status, plus the IP once running.
func vmState(vm *hfv1.VirtualMachine) string {
	if vm.Status.Status == hfv1.VmStatusRunning && vm.Status.PublicIP != "" {
		return string(vm.Status.Status) + "  " + vm.Status.PublicIP
	}
	return string(vm.Status.Status)
}

// waitRunning prints one line per VM status change until all run with an IP.
func (p *playground) waitRunning(ctx context.Context, names []string) error {
	width := len(names[len(names)-1])
	began := time.Now()
	deadline := time.NewTimer(runningTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	last := map[string]string{}
	for {
		running := 0
		for _, name := range names {
			vm, err := p.hf.VMs.Get(Namespace, name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("reading VM %s: %w", name, err)
			}
			state := vmState(vm)
			if state != last[name] && state != "" {
				fmt.Fprintf(p.out, "%-*s  %s\n", width, name, state)
			}
			last[name] = state
			if vm.Status.Status == hfv1.VmStatusRunning && vm.Status.PublicIP != "" {
				running++
			}
		}
		if running == len(names) {
			fmt.Fprintf(p.out, "all %d VMs running after %.1fs\n", len(names), time.Since(began).Seconds())
			return nil
		}
		if err := p.controllerExited(); err != nil {
			return err
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("interrupted while waiting for VMs: %w", ctx.Err())
		case <-deadline.C:
			return fmt.Errorf("VMs not running after %v (%s); see %s", runningTimeout, summarize(names, last), p.logPath)
		}
	}
}

func summarize(names []string, states map[string]string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s: %q", n, states[n])
	}
	return strings.Join(parts, ", ")
}

// deleteVMs deletes the VMs as Gargantua does and waits until the controller
// has removed every droplet and key from the fake, or Abort/timeout.
func (p *playground) deleteVMs(names []string) error {
	fmt.Fprintf(p.out, "deleting %d VMs\n", len(names))
	for _, name := range names {
		if err := p.hf.VMs.Delete(Namespace, name, nil); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting VM %s: %w", name, err)
		}
	}
	began := time.Now()
	deadline := time.NewTimer(cleanupTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		res := p.opts.Result
		res.DropletsLeft, res.KeysLeft = len(p.do.Droplets(Token)), len(p.do.Keys(Token))
		if res.DropletsLeft == 0 && res.KeysLeft == 0 {
			fmt.Fprintf(p.out, "fake DigitalOcean holds 0 droplets and 0 keys (%.1fs)\n", time.Since(began).Seconds())
			return nil
		}
		select {
		case <-tick.C:
		case <-p.opts.Abort:
			return fmt.Errorf("cleanup aborted: fake still holds %d droplets and %d keys", res.DropletsLeft, res.KeysLeft)
		case <-deadline.C:
			return fmt.Errorf("fake still holds %d droplets and %d keys after %v; see %s",
				res.DropletsLeft, res.KeysLeft, cleanupTimeout, p.logPath)
		}
	}
}
