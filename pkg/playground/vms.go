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
	if p.static() {
		return p.createVMSet()
	}
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

// createVMSet is a scheduled event starting: its VM set and the set's VMs.
func (p *playground) createVMSet() ([]string, error) {
	fmt.Fprintf(p.out, "creating VM set %s of %d static VMs in environment %s (scheduled event %s)\n",
		VMSetName, p.opts.VMs, EnvName, EventName)
	vms, err := p.garg.CreateVMSet(VMSetName, EnvName, TemplateName, p.opts.VMs, EventName)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(vms))
	for i, vm := range vms {
		names[i] = vm.Name
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

// follow prints each change of the namespace's VMs (a session bound or
// ended, a VM deleted, a replacement made) until ctx ends.
func (p *playground) follow(ctx context.Context) error {
	last := map[string]string{}
	first := true
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		list, err := p.hf.VMs.List(Namespace, metav1.ListOptions{})
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("listing VMs: %w", err)
		}
		if err == nil {
			seen := map[string]bool{}
			for i := range list.Items {
				vm := &list.Items[i]
				seen[vm.Name] = true
				line := describeVM(vm)
				if !first && line != last[vm.Name] {
					fmt.Fprintf(p.out, "%s  %s\n", vm.Name, line)
				}
				last[vm.Name] = line
			}
			for name := range last {
				if !seen[name] {
					fmt.Fprintf(p.out, "%s  gone\n", name)
					delete(last, name)
				}
			}
			first = false
		}
		if err := p.controllerExited(); err != nil {
			return err
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			fmt.Fprintln(p.out)
			return nil
		}
	}
}

// describeVM is vmState plus what a session changes: user, tainted, deleting.
func describeVM(vm *hfv1.VirtualMachine) string {
	parts := []string{vmState(vm)}
	if parts[0] == "" {
		parts[0] = "new"
	}
	if vm.Labels["bound"] == "true" && vm.Spec.UserId != "" && vm.Labels["vmset"] != "" {
		parts = append(parts, "user "+vm.Spec.UserId)
	}
	if vm.Status.Tainted {
		parts = append(parts, "tainted")
	}
	if vm.DeletionTimestamp != nil {
		parts = append(parts, "deleting")
	}
	return strings.Join(parts, "  ")
}

// deleteVMs ends the scheduled event (deletes the VM set, whose VMs the
// garbage collector deletes) on the static path, deletes every VM left in
// the namespace (the playground's and any made by hand), and waits until
// they are gone and the controller has removed every droplet and key from
// the fake, or Abort/timeout.
func (p *playground) deleteVMs() error {
	if p.stateWritten {
		// First, so no session command acts on a playground stopping.
		if err := removeState(p.opts.StatePath); err != nil {
			fmt.Fprintf(p.out, "removing state file: %v\n", err)
		}
		p.stateWritten = false
	}
	if p.static() {
		fmt.Fprintf(p.out, "deleting VM set %s (the garbage collector deletes its VMs)\n", VMSetName)
		if err := p.garg.DeleteVMSet(VMSetName); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting VM set %s: %w", VMSetName, err)
		}
	}
	list, err := p.hf.VMs.List(Namespace, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing VMs: %w", err)
	}
	for _, vm := range list.Items {
		if vm.DeletionTimestamp != nil {
			fmt.Fprintf(p.out, "VM %s already deleting\n", vm.Name)
			continue
		}
		fmt.Fprintf(p.out, "deleting VM %s\n", vm.Name)
		if err := p.hf.VMs.Delete(Namespace, vm.Name, nil); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting VM %s: %w", vm.Name, err)
		}
	}
	began := time.Now()
	deadline := time.NewTimer(cleanupTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	vmsLeft := -1
	for {
		res := p.opts.Result
		res.DropletsLeft, res.KeysLeft = len(p.do.Droplets(Token)), len(p.do.Keys(Token))
		if left, err := p.hf.VMs.List(Namespace, metav1.ListOptions{}); err == nil {
			vmsLeft = len(left.Items)
		}
		if vmsLeft == 0 && res.DropletsLeft == 0 && res.KeysLeft == 0 {
			fmt.Fprintf(p.out, "no VMs left; fake DigitalOcean holds 0 droplets and 0 keys (%.1fs)\n", time.Since(began).Seconds())
			return nil
		}
		select {
		case <-tick.C:
		case <-p.opts.Abort:
			return fmt.Errorf("cleanup aborted: %d VMs left, fake still holds %d droplets and %d keys",
				vmsLeft, res.DropletsLeft, res.KeysLeft)
		case <-deadline.C:
			return fmt.Errorf("%d VMs left, fake still holds %d droplets and %d keys after %v; see %s",
				vmsLeft, res.DropletsLeft, res.KeysLeft, cleanupTimeout, p.logPath)
		}
	}
}
