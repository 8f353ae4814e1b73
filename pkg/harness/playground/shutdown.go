package playground

import (
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// progressEvery is how often shutdown repeats its progress line when nothing changed.
const progressEvery = 5 * time.Second

// deleteVMs ends the scheduled event (deletes the VM set, whose VMs the
// garbage collector deletes) on the static path, deletes every VM in the
// namespace (the playground's, those of `vm add` and any made by hand, also
// ones that appear meanwhile), and waits until they are gone and the
// controller has removed every droplet and key from the fake, or
// Abort/timeout, when it names whatever is left.
func (p *playground) deleteVMs() error {
	if p.stateWritten {
		// First, so no helper command acts on a playground stopping.
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
	if err := p.endPoolEvent(); err != nil {
		return err
	}
	began := time.Now()
	deadline := time.NewTimer(cleanupTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	seen := map[string]bool{} // every VM this shutdown has met
	lastLine, lastPrinted := "", time.Time{}
	for {
		vmsLeft, err := p.deleteRemainingVMs(seen)
		if err != nil {
			fmt.Fprintf(p.out, "listing VMs: %v\n", err)
		}
		res := p.opts.Result
		res.DropletsLeft, res.KeysLeft = len(p.do.Droplets(Token)), len(p.do.Keys(Token))
		if err == nil && vmsLeft == 0 && res.DropletsLeft == 0 && res.KeysLeft == 0 {
			fmt.Fprintf(p.out, "no VMs left; fake DigitalOcean holds 0 droplets and 0 keys (%.1fs)\n", time.Since(began).Seconds())
			return nil
		}
		line := fmt.Sprintf("deleting %d VMs: %d gone, %d left; fake DigitalOcean holds %d droplets, %d keys",
			len(seen), len(seen)-vmsLeft, vmsLeft, res.DropletsLeft, res.KeysLeft)
		if line != lastLine || time.Since(lastPrinted) >= progressEvery {
			fmt.Fprintln(p.out, line)
			lastLine, lastPrinted = line, time.Now()
		}
		select {
		case <-tick.C:
		case <-p.opts.Abort:
			return fmt.Errorf("cleanup aborted after %.1fs; left behind:\n%s", time.Since(began).Seconds(), p.remains())
		case <-deadline.C:
			return fmt.Errorf("cleanup gave up after %v; left behind:\n%s\nsee %s", cleanupTimeout, p.remains(), p.logPath)
		}
	}
}

// deleteRemainingVMs deletes each VM of the namespace not yet deleting,
// naming each the first time it is met, and returns how many VMs exist.
func (p *playground) deleteRemainingVMs(seen map[string]bool) (int, error) {
	list, err := p.hf.VMs.List(Namespace, metav1.ListOptions{})
	if err != nil {
		return len(seen), err
	}
	for _, vm := range list.Items {
		first := !seen[vm.Name]
		seen[vm.Name] = true
		if vm.DeletionTimestamp != nil {
			if first {
				fmt.Fprintf(p.out, "VM %s already deleting\n", vm.Name)
			}
			continue
		}
		if first {
			fmt.Fprintf(p.out, "deleting VM %s\n", vm.Name)
		}
		// A failure is retried at the next poll; if it lasts, remains names the VM.
		if err := p.hf.VMs.Delete(Namespace, vm.Name, nil); err != nil && !apierrors.IsNotFound(err) {
			fmt.Fprintf(p.out, "deleting VM %s: %v\n", vm.Name, err)
		}
	}
	return len(list.Items), nil
}

// remains names what cleanup has not removed: VMs (with their finalizers),
// the Droplet and Key objects, and the droplets and keys at the fake.
func (p *playground) remains() string {
	var lines []string
	add := func(what string, items []string, err error) {
		switch {
		case err != nil:
			lines = append(lines, fmt.Sprintf("  %s: cannot list: %v", what, err))
		case len(items) > 0:
			lines = append(lines, fmt.Sprintf("  %s (%d): %s", what, len(items), strings.Join(items, ", ")))
		}
	}
	var vms, droplets, keys, fakeDroplets, fakeKeys []string
	vmList, err := p.hf.VMs.List(Namespace, metav1.ListOptions{})
	if err == nil {
		for _, vm := range vmList.Items {
			vms = append(vms, fmt.Sprintf("%s (finalizers %v)", vm.Name, vm.Finalizers))
		}
	}
	add("VMs", vms, err)
	dropletList, err := p.droplets.List(Namespace, metav1.ListOptions{})
	if err == nil {
		for _, d := range dropletList.Items {
			droplets = append(droplets, fmt.Sprintf("%s (droplet %d, finalizers %v)", d.Name, d.Status.DropletID, d.Finalizers))
		}
	}
	add("Droplet objects", droplets, err)
	keyList, err := p.keys.List(Namespace, metav1.ListOptions{})
	if err == nil {
		for _, k := range keyList.Items {
			keys = append(keys, fmt.Sprintf("%s (finalizers %v)", k.Name, k.Finalizers))
		}
	}
	add("Key objects", keys, err)
	for _, d := range p.do.Droplets(Token) {
		fakeDroplets = append(fakeDroplets, fmt.Sprintf("%s (id %d, %s)", d.Name, d.ID, d.Status))
	}
	add("fake DigitalOcean droplets", fakeDroplets, nil)
	for _, k := range p.do.Keys(Token) {
		fakeKeys = append(fakeKeys, fmt.Sprintf("%s (id %d)", k.Name, k.ID))
	}
	add("fake DigitalOcean keys", fakeKeys, nil)
	if len(lines) == 0 {
		return "  nothing (it was all gone at the last look)"
	}
	return strings.Join(lines, "\n")
}
