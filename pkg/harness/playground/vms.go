package playground

import (
	"context"
	"fmt"
	"strings"
	"time"

	hfv1 "github.com/hobbyfarm/gargantua/pkg/apis/hobbyfarm.io/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func (p *playground) createVMs() ([]string, error) {
	if p.static() {
		return p.createVMSet()
	}
	fmt.Fprintf(p.out, "creating %d VMs in environment %s\n", p.opts.VMs, EnvName)
	names := make([]string, p.opts.VMs)
	for i := range names {
		names[i] = fmt.Sprintf("%s%d", vmNamePrefix, i+1)
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
	if isRunning(vm) {
		return string(vm.Status.Status) + "  " + vm.Status.PublicIP
	}
	return string(vm.Status.Status)
}

// isRunning reports whether the VM runs with an IP, i.e. a user can log in.
func isRunning(vm *hfv1.VirtualMachine) bool {
	return vm.Status.Status == hfv1.VmStatusRunning && vm.Status.PublicIP != ""
}

// printSSHHint prints how to log in to a running VM, once the helper
// commands can find this playground (its state file).
func (p *playground) printSSHHint(vm string) {
	if p.opts.StatePath != "" {
		fmt.Fprintf(p.out, "%s  ssh: scripts/playground ssh %s\n", vm, vm)
	}
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
			if isRunning(vm) {
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
	wasRunning := map[string]bool{}
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
					if isRunning(vm) && !wasRunning[vm.Name] {
						p.printSSHHint(vm.Name)
					}
				}
				last[vm.Name], wasRunning[vm.Name] = line, isRunning(vm)
			}
			for name := range last {
				if !seen[name] {
					fmt.Fprintf(p.out, "%s  gone\n", name)
					delete(last, name)
					delete(wasRunning, name)
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
